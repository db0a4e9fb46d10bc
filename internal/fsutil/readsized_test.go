package fsutil

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadSizedReadsWhatIsThereWhateverStatSaid: the size only sizes the buffer; a file that grew
// or shrank after Stat is read as it is.
func TestReadSizedReadsWhatIsThereWhateverStatSaid(t *testing.T) {
	body := strings.Repeat("0123456789", 100)
	for _, size := range []int64{0, 1, 999, 1000, 1001, 5000} {
		b, err := readSized(strings.NewReader(body), size)
		require.NoError(t, err)
		assert.Equal(t, body, string(b), "stat size %d", size)
		b, err = readSized(iotest.OneByteReader(strings.NewReader(body)), size)
		require.NoError(t, err)
		assert.Equal(t, body, string(b), "one byte at a time, stat size %d", size)
	}
	_, err := readSized(iotest.ErrReader(errors.New("disk on fire")), 10)
	assert.EqualError(t, err, "disk on fire")
}
