package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCountedAgreesWithItsNumber: one is singular, zero and many are plural, whatever the words.
func TestCountedAgreesWithItsNumber(t *testing.T) {
	assert.Equal(t, "1 file differs", counted(1, "file differs", "files differ"))
	assert.Equal(t, "2 files differ", counted(2, "file differs", "files differ"))
	assert.Equal(t, "0 warnings", counted(0, "warning", "warnings"))
	assert.Equal(t, "1 entry verifies", counted(1, "entry verifies", "entries verify"))
	assert.Equal(t, "-1 lines", counted(-1, "line", "lines"))
	assert.Equal(t, "1000 judgments", counted(1000, "judgment", "judgments"))
}
