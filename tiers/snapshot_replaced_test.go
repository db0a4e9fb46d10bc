//go:build unix

package tiers

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
)

// TestAReplacedInputIsNeverConfirmedByAKeptHandle (SPEC §2 inv. 7, §7.4): whatever an eval
// command does to an input between the first read and the re-check — rewrite it in place, replace
// it by rename (the old file kept alive by a hard link, so that a handle kept open reads it still),
// make the path a hard link or a symbolic link to other bytes, truncate it, grow it past its
// limit, or put a named pipe in its place — the re-check sees the change and names the input,
// without waiting on a pipe. It holds for a run that reads alone and for one of geas gate --all
// (tiers.Shared), whose policy and debt register are read again through handles kept open. The
// controls: an input replaced by another file with the same bytes, or by a link to the same
// bytes at another path, is no change.
func TestAReplacedInputIsNeverConfirmedByAKeptHandle(t *testing.T) {
	const (
		policy = ".geas/gate-policy.json"
		debt   = ".geas/missions/m1/evolution/debt-register.json"
	)
	evidence := taskFile("evidence/qa-engineer.json")
	ctr := taskFile("contract.json")

	// replace puts a new file with content at rel by rename, keeping the old one alive under
	// another name (a hard link), so that its inode is not reused.
	replace := func(f *fixture, rel, content string) {
		p := f.path(rel)
		require.NoError(t, os.Link(p, p+".old"))
		require.NoError(t, os.WriteFile(p+".new", []byte(content), 0o644))
		require.NoError(t, os.Rename(p+".new", p))
	}
	// other is rel's content with one byte more inside the JSON (a space before the last brace).
	other := func(f *fixture, rel string) string {
		s := strings.TrimRight(string(f.read(rel)), "\n")
		return s[:len(s)-1] + " }"
	}
	attacks := []struct {
		name   string
		attack func(f *fixture, file string)
	}{
		{"rewritten in place to the same size", func(f *fixture, file string) {
			s := string(f.read(file))
			require.Contains(t, s, ": ")
			s = " " + strings.Replace(s, ": ", ":", 1) // other bytes, as many
			fh, err := os.OpenFile(f.path(file), os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = fh.WriteAt([]byte(s), 0)
			require.NoError(t, err)
			require.NoError(t, fh.Close())
		}},
		{"replaced by rename, the old file kept alive", func(f *fixture, file string) {
			replace(f, file, other(f, file))
		}},
		{"a hard link to other bytes in its place", func(f *fixture, file string) {
			p := f.path(file)
			require.NoError(t, os.WriteFile(p+".other", []byte(other(f, file)), 0o644))
			require.NoError(t, os.Rename(p, p+".old"))
			require.NoError(t, os.Link(p+".other", p))
		}},
		{"a symbolic link to other bytes in its place", func(f *fixture, file string) {
			p := f.path(file)
			require.NoError(t, os.WriteFile(p+".other", []byte(other(f, file)), 0o644))
			require.NoError(t, os.Rename(p, p+".old"))
			require.NoError(t, os.Symlink(filepath.Base(p)+".other", p))
		}},
		{"truncated", func(f *fixture, file string) {
			require.NoError(t, os.Truncate(f.path(file), 0))
		}},
		{"grown past its limit", func(f *fixture, file string) {
			require.NoError(t, os.Truncate(f.path(file), 64<<20+1))
		}},
		{"a named pipe in its place", func(f *fixture, file string) {
			p := f.path(file)
			require.NoError(t, os.Rename(p, p+".old"))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
		}},
	}
	inputs := []string{policy, debt, evidence, ctr}
	for _, shared := range []bool{false, true} {
		how := "alone"
		if shared {
			how = "under --all"
		}
		for _, file := range inputs {
			for _, a := range attacks {
				t.Run(how+"/"+filepath.Base(file)+"/"+a.name, func(t *testing.T) {
					t.Parallel()
					f := newFixture(t, true)
					f.write(policy, `{"eval_timeout": "5m"}`)
					in, done := gatherFor(t, f, shared)
					defer done()
					require.NotNil(t, in.Contract)
					require.Nil(t, in.PolicyErr)
					require.NotNil(t, in.DebtData)
					require.True(t, in.sameBytes(), "control: nothing changed yet")
					a.attack(f, file)
					changed := returnsWithin(t, 10*time.Second, in.changedInputs)
					assert.Contains(t, changed, file, "the re-check names the input changed")
				})
			}
			t.Run(how+"/"+filepath.Base(file)+"/control: the same bytes at another file or path", func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, true)
				f.write(policy, `{"eval_timeout": "5m"}`)
				in, done := gatherFor(t, f, shared)
				defer done()
				p := f.path(file)
				replace(f, file, string(f.read(file)))
				assert.Empty(t, in.changedInputs(), "replaced by a file with the same bytes")
				require.NoError(t, os.Rename(p, p+".same"))
				require.NoError(t, os.Symlink(filepath.Base(p)+".same", p))
				assert.Empty(t, in.changedInputs(), "a symbolic link to the same bytes")
			})
		}
	}
}

// gatherFor gathers the fixture's task as a run alone does (Gather), or as a run of geas gate
// --all does (GatherLoaded with a Shared, whose handles done closes).
func gatherFor(t *testing.T, f *fixture, shared bool) (*Snapshot, func()) {
	t.Helper()
	if !shared {
		in := f.gather()
		return in, in.Release
	}
	p := f.open()
	s := NewShared(true)
	k, err := contract.Load(p.Geas, testTaskDir+"/contract.json")
	require.NoError(t, err)
	in := GatherLoaded(p, testMission, testTask, testTaskDir, Loaded{Contract: k, Shared: s})
	require.NotEmpty(t, s.held, "the policy and the debt register are read through kept handles")
	return in, func() { in.Release(); s.Close() }
}

// returnsWithin runs fn and fails the test if it does not return within d (a read that waits on a pipe).
func returnsWithin[T any](t *testing.T, d time.Duration, fn func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- fn() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		require.FailNow(t, "the re-check did not return", "after %v", d)
	}
	var zero T
	return zero
}
