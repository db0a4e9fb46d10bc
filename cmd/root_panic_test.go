package cmd

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAPanicExitsAsAnErrorNotABlock: a panic in geas ends the process with 3 (error: the gate
// could not decide) and the panic's value and stack on stderr, not with Go's 2, which a caller
// of geas gate reads as block; without a panic the exit code is left alone.
func TestAPanicExitsAsAnErrorNotABlock(t *testing.T) {
	var stderr bytes.Buffer
	code := func() (code int) {
		defer exitOnPanic(&stderr, &code)
		panic("boom")
	}()
	assert.Equal(t, ExitError, code)
	assert.Contains(t, stderr.String(), "geas: internal error (a bug in geas; please report it): boom")
	assert.Contains(t, stderr.String(), "goroutine ", "the stack is printed")

	stderr.Reset()
	code = func() (code int) {
		defer exitOnPanic(&stderr, &code)
		return ExitBlock
	}()
	assert.Equal(t, ExitBlock, code)
	assert.Empty(t, stderr.String())
}
