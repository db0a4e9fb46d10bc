package fsutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFileAtomic(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		existing string // content before the write, "" for none
		perm     os.FileMode
	}{
		{"creates a file at the top", "run.json", "", 0o644},
		{"creates missing parent directories", "missions/m1/tasks/t1/record.json", "", 0o644},
		{"replaces an existing file", "missions/m1/tasks/t1/record.json", "old content that is longer than the new\n", 0o644},
		{"honours perm", "state/secret.json", "", 0o600},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := openRoot(t)
			if tc.existing != "" {
				require.NoError(t, root.MkdirAll(filepath.Dir(tc.file), 0o755))
				require.NoError(t, root.WriteFile(tc.file, []byte(tc.existing), 0o644))
			}
			want := []byte("{\"new\": true}\n")

			require.NoError(t, WriteFileAtomic(root, tc.file, want, tc.perm))

			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(tc.file)))
			require.NoError(t, err)
			assert.Equal(t, want, got)
			fi, err := root.Stat(tc.file)
			require.NoError(t, err)
			assert.Zero(t, fi.Mode().Perm()&^tc.perm, "mode %v has bits beyond %v", fi.Mode().Perm(), tc.perm)
			assert.Empty(t, tempFiles(t, dir))
		})
	}
}

// tempFiles lists the temporary files WriteFileAtomic may have left anywhere under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), ".tmp-") {
			out = append(out, p)
		}
		return nil
	}))
	return out
}

func TestWriteFileAtomicLeavesNoTempFilesOnFailure(t *testing.T) {
	root, dir := openRoot(t)
	// A directory in the way makes the final rename fail after the temporary file was written.
	require.NoError(t, root.MkdirAll("missions/m1/record.json/child", 0o755))

	err := WriteFileAtomic(root, "missions/m1/record.json", []byte("{}"), 0o644)

	require.Error(t, err)
	assert.Empty(t, tempFiles(t, dir))
}

func TestWriteFileAtomicStaysInsideTheRoot(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, root, outside string) // root and outside are OS paths
		file  string
	}{
		{name: "dot-dot", file: "../x"},
		{name: "dot-dot inside a longer name", file: "missions/../../x"},
		{name: "absolute name", file: "/x"},
		{name: "empty name", file: ""},
		{
			name: "symlinked directory pointing outside",
			setup: func(t *testing.T, root, outside string) {
				require.NoError(t, os.Symlink(outside, filepath.Join(root, "missions")))
			},
			file: "missions/x",
		},
		{
			name: "symlinked parent of a new directory pointing outside",
			setup: func(t *testing.T, root, outside string) {
				require.NoError(t, os.Symlink(outside, filepath.Join(root, "missions")))
			},
			file: "missions/m1/tasks/t1/x",
		},
		{
			name: "relative symlink climbing out",
			setup: func(t *testing.T, root, outside string) {
				rel, err := filepath.Rel(root, outside)
				require.NoError(t, err)
				require.NoError(t, os.Symlink(rel, filepath.Join(root, "missions")))
			},
			file: "missions/x",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			outside := filepath.Join(base, "outside")
			rootDir := filepath.Join(base, "project", ".geas")
			require.NoError(t, os.MkdirAll(outside, 0o755))
			require.NoError(t, os.MkdirAll(rootDir, 0o755))
			if tc.setup != nil {
				tc.setup(t, rootDir, outside)
			}
			root, err := os.OpenRoot(rootDir)
			require.NoError(t, err)
			defer root.Close()

			err = WriteFileAtomic(root, tc.file, []byte("escaped"), 0o644)

			assert.Error(t, err)
			assert.Empty(t, dirContents(t, outside), "nothing may be written outside the root")
			assert.NoFileExists(t, filepath.Join(base, "x"))
			assert.NoFileExists(t, filepath.Join(base, "project", "x"))
		})
	}
}

func TestWriteFileAtomicReplacesASymlinkedFileInsteadOfWritingThrough(t *testing.T) {
	base := t.TempDir()
	target := filepath.Join(base, "outside.json")
	require.NoError(t, os.WriteFile(target, []byte("untouched"), 0o644))
	rootDir := filepath.Join(base, ".geas")
	require.NoError(t, os.Mkdir(rootDir, 0o755))
	require.NoError(t, os.Symlink(target, filepath.Join(rootDir, "record.json")))
	root, err := os.OpenRoot(rootDir)
	require.NoError(t, err)
	defer root.Close()

	// The rename replaces the link itself; whether or not that succeeds, the target is untouched.
	_ = WriteFileAtomic(root, "record.json", []byte("new"), 0o644)

	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, "untouched", string(got))
}

func dirContents(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestWriteFileAtomicRemovesStaleTemps: a writer killed between creating its temporary file and
// renaming it leaves the file behind; a later write of the same file removes it once it is old,
// and leaves a fresh one (a writer that may still be running) alone.
func TestWriteFileAtomicRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	stale := filepath.Join(dir, ".record.json.tmp-0badf00d")
	fresh := filepath.Join(dir, ".record.json.tmp-0000f00d")
	other := filepath.Join(dir, ".contract.json.tmp-0badf00d")
	for _, p := range []string{stale, fresh, other} {
		require.NoError(t, os.WriteFile(p, []byte("partial"), 0o644))
	}
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(stale, old, old))
	require.NoError(t, os.Chtimes(other, old, old))

	require.NoError(t, WriteFileAtomic(root, "record.json", []byte("{}\n"), 0o644))
	assert.NoFileExists(t, stale)
	assert.FileExists(t, fresh)
	assert.FileExists(t, other, "only the temporary files of the file written are touched")
}

// openRoot opens a fresh .geas directory as a root.
func openRoot(t *testing.T) (*os.Root, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".geas")
	require.NoError(t, os.Mkdir(dir, 0o755))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = root.Close() })
	return root, dir
}
