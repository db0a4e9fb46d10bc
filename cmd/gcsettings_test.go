package cmd

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGateAllTunesTheCollectorUnlessTheUserDid(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := tuneGCForAll()
	assert.Equal(t, allGCPercent, debug.SetGCPercent(allGCPercent))
	assert.Equal(t, int64(allMemoryLimit), debug.SetMemoryLimit(-1))
	restore()
	assert.Equal(t, 100, debug.SetGCPercent(100), "restored")

	t.Setenv("GOGC", "50")
	restore = tuneGCForAll()
	assert.Equal(t, 100, debug.SetGCPercent(100), "the user's GOGC wins")
	restore()
}
