package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadLimitedAbsentAnswersAsTheOuterRoot: ReadLimitedAbsent reads what the outer root reads,
// and finds missing exactly what it finds missing (a missing file, a link to one, a missing
// directory on the way, also through a link that leaves the directory); every other error is
// the outer root's, text included.
func TestReadLimitedAbsentAnswersAsTheOuterRoot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on windows")
	}
	top := t.TempDir()
	geas := filepath.Join(top, ".geas")
	task := filepath.Join(geas, "missions", "m", "tasks", "t1")
	other := filepath.Join(geas, "missions", "m", "tasks", "t2")
	require.NoError(t, os.MkdirAll(task, 0o755))
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(task, "record.json"), []byte("mine"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(task, "big.json"), []byte("0123456789"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(other, "h.jsonl"), []byte("theirs"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(top, "outside.json"), []byte("outside"), 0o644))
	links := map[string]string{
		"dangling.json": "nothing.json", "sideways.json": "../t2/h.jsonl", "sideways-missing.json": "../t2/nothing.json",
		"out.json": "../../../../../outside.json", "out-missing.json": "../../../../../nothing.json", "loop.json": "loop.json",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(task, name)))
	}
	require.NoError(t, os.Mkdir(filepath.Join(task, "adir"), 0o755))
	outer, err := os.OpenRoot(geas)
	require.NoError(t, err)
	defer outer.Close()
	d := OpenSubdir(outer, "missions/m/tasks/t1")
	defer d.Close()
	missing := 0
	for _, rel := range []string{"record.json", "big.json", "absent.json", "no/such/file", "adir", "dangling.json",
		"sideways.json", "sideways-missing.json", "out.json", "out-missing.json", "loop.json", "record.json/x"} {
		name := d.Name + "/" + rel
		want, werr := ReadLimited(outer, name, 5)
		got, gerr := d.ReadLimitedAbsent(name, 5)
		require.Equal(t, string(want), string(got), rel)
		require.Equal(t, errors.Is(werr, fs.ErrNotExist), errors.Is(gerr, fs.ErrNotExist), "%s: %v / %v", rel, werr, gerr)
		if errors.Is(werr, fs.ErrNotExist) {
			missing++
			continue
		}
		if werr != nil {
			require.EqualError(t, gerr, werr.Error(), rel)
		} else {
			require.NoError(t, gerr, rel)
		}
	}
	require.GreaterOrEqual(t, missing, 4, "the missing cases are missing")
}
