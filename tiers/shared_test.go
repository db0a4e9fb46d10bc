package tiers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/policy"
)

// TestASharedFileReadsAsAFreshRead: a file the runs of geas gate --all share is read through the
// handle kept from its first read, and every read answers what a fresh read of the path answers
// (fsutil.ReadLimited, the oracle): after the file is rewritten in place, grown past the limit,
// replaced by another file, removed, put back, or replaced by what is not a file.
func TestASharedFileReadsAsAFreshRead(t *testing.T) {
	dir := t.TempDir()
	geas, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer geas.Close()
	const name, limit = "gate-policy.json", 64
	path := filepath.Join(dir, name)
	s := NewShared(true)
	defer s.Close()
	same := func(step string) {
		t.Helper()
		want, werr := fsutil.ReadLimited(geas, name, limit)
		got, gerr := s.read(geas, name, limit)
		if werr != nil {
			require.Error(t, gerr, step)
			assert.Equal(t, werr.Error(), gerr.Error(), step)
			return
		}
		require.NoError(t, gerr, step)
		assert.Equal(t, string(want), string(got), step)
	}
	same("absent")
	require.NoError(t, os.WriteFile(path, []byte(`{"a": 1}`), 0o644))
	same("written")
	require.Len(t, s.held, 1, "the file is kept open")
	h := s.held[name]
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"b": 2}`)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	same("rewritten in place")
	assert.Same(t, h, s.held[name], "the same file: read through the handle kept")
	require.NoError(t, os.WriteFile(path, make([]byte, limit+1), 0o644))
	same("grown past the limit")
	other := filepath.Join(dir, "next.json")
	require.NoError(t, os.WriteFile(other, []byte(`{"c": 3}`), 0o644))
	require.NoError(t, os.Rename(other, path))
	same("replaced by another file")
	assert.NotSame(t, h, s.held[name], "another file: opened afresh")
	require.NoError(t, os.Remove(path))
	same("removed")
	require.NoError(t, os.WriteFile(path, []byte(`{"d": 4}`), 0o644))
	same("put back")
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	same("a directory in its place")
}

// TestTheSharedPolicyIsEachRunsOwn: the runs that share a policy document get equal policies, and
// one run changing its own does not change another's; changed bytes are parsed afresh.
func TestTheSharedPolicyIsEachRunsOwn(t *testing.T) {
	s := NewShared(false)
	doc := []byte(`{"stub_patterns": ["HACK"], "shared_globs": ["x.lock"]}`)
	first, err := s.parsePolicy(".geas/gate-policy.json", doc)
	require.NoError(t, err)
	want, err := policy.Parse(".geas/gate-policy.json", doc)
	require.NoError(t, err)
	assert.Equal(t, want, first)
	first.SharedGlobs[0] = "changed"
	second, err := s.parsePolicy(".geas/gate-policy.json", doc)
	require.NoError(t, err)
	assert.Equal(t, want, second)
	_, err = s.parsePolicy(".geas/gate-policy.json", []byte(`{"stub_patterns": ["("]}`))
	require.Error(t, err, "changed bytes are parsed")
}
