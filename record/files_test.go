package record

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

func TestLockTaskSerializesOneTask(t *testing.T) {
	root, _ := openRoot(t)
	require.NoError(t, root.MkdirAll("missions/m1/tasks/t1", 0o755))
	first, err := LockTask(t.Context(), root, "missions/m1/tasks/t1")
	require.NoError(t, err)

	var released atomic.Bool
	acquired := make(chan error, 1)
	go func() {
		second, err := LockTask(t.Context(), root, "missions/m1/tasks/t1")
		if err == nil {
			if !released.Load() {
				err = errors.New("second lock taken while the first was held")
			}
			err = errors.Join(err, second.Unlock())
		}
		acquired <- err
	}()

	select {
	case err := <-acquired:
		t.Fatalf("second LockTask returned while the first lock was held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	released.Store(true)
	require.NoError(t, first.Unlock())
	select {
	case err := <-acquired:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("second LockTask never returned after the first was released")
	}
}

func TestLockTaskDifferentTasksDoNotWait(t *testing.T) {
	root, _ := openRoot(t)
	for _, task := range []string{"t1", "t2"} {
		require.NoError(t, root.MkdirAll("missions/m1/tasks/"+task, 0o755))
	}
	held, err := LockTask(t.Context(), root, "missions/m1/tasks/t1")
	require.NoError(t, err)
	defer held.Unlock()

	// A generous deadline: the point is that this does not wait for t1, not how fast it is.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	other, err := LockTask(ctx, root, "missions/m1/tasks/t2")
	require.NoError(t, err)
	assert.NoError(t, other.Unlock())
}

func TestLockTaskHonoursContext(t *testing.T) {
	root, _ := openRoot(t)
	require.NoError(t, root.MkdirAll("missions/m1/tasks/t1", 0o755))
	held, err := LockTask(t.Context(), root, "missions/m1/tasks/t1")
	require.NoError(t, err)
	defer held.Unlock()

	t.Run("cancelled while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			l, err := LockTask(ctx, root, "missions/m1/tasks/t1")
			if err == nil {
				_ = l.Unlock()
			}
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, context.Canceled)
		case <-time.After(30 * time.Second):
			t.Fatal("LockTask ignored the cancellation")
		}
	})
	t.Run("deadline passes while waiting", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		_, err := LockTask(ctx, root, "missions/m1/tasks/t1")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("already cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := LockTask(ctx, root, "missions/m1/tasks/t2")
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestLockTaskRefusals(t *testing.T) {
	root, _ := openRoot(t)
	tests := []struct {
		name    string
		taskDir string
		notExit bool
	}{
		{"missing task directory", "missions/m1/tasks/nope", true},
		{"escaping name", "../elsewhere", false},
		{"empty name", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := LockTask(t.Context(), root, tc.taskDir)
			require.Error(t, err)
			assert.Nil(t, l)
			if tc.notExit {
				assert.ErrorIs(t, err, fs.ErrNotExist)
			}
		})
	}
}

func TestLockFileIsKeptAndUnlockIsIdempotent(t *testing.T) {
	root, _ := openRoot(t)
	require.NoError(t, root.MkdirAll("t1", 0o755))
	l, err := LockTask(t.Context(), root, "t1")
	require.NoError(t, err)
	require.NoError(t, l.Unlock())
	assert.NoError(t, l.Unlock())
	_, err = root.Stat("t1/record.lock")
	assert.NoError(t, err, "the lock file is never deleted")
	again, err := LockTask(t.Context(), root, "t1")
	require.NoError(t, err)
	assert.NoError(t, again.Unlock())
}

func TestTimestamp(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"utc", time.Date(2025, 6, 1, 9, 5, 3, 999_999_999, time.UTC), "2025-06-01T09:05:03Z"},
		{"converted to utc", time.Date(2025, 6, 1, 2, 0, 0, 0, time.FixedZone("PDT", -7*3600)), "2025-06-01T09:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Timestamp(tc.in))
		})
	}
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

// TestALockWaitNamesTheHolderAndGivesUp (SPEC §7.3): the holder writes its pid into record.lock;
// a waiter is told who holds the lock once the notice time has passed, and gives up after its
// timeout with a *LockTimeoutError naming the holder. Once the lock is free it is taken at once.
func TestALockWaitNamesTheHolderAndGivesUp(t *testing.T) {
	root, dir := openRoot(t)
	require.NoError(t, root.MkdirAll("t1", 0o755))
	held, err := LockTask(t.Context(), root, "t1")
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "t1", "record.lock"))
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("%d\n", os.Getpid()), string(b), "the holder's pid is in the lock file")

	var notices []int
	ctx := WithLockWait(t.Context(), LockWait{Timeout: 300 * time.Millisecond, Notice: 20 * time.Millisecond,
		Waiting: func(name string, holder int) {
			assert.Equal(t, ".geas/t1/record.lock", name)
			notices = append(notices, holder)
		}})
	l, err := LockTask(ctx, root, "t1") // a second open file description: flock conflicts within a process too
	assert.Nil(t, l)
	var te *LockTimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, os.Getpid(), te.Holder)
	assert.Equal(t, []int{os.Getpid()}, notices, "one notice, naming the holder")
	assert.Contains(t, err.Error(), fmt.Sprintf("gave up waiting for the task lock .geas/t1/record.lock after 300ms: process %d holds it", os.Getpid()))

	// A holder that wrote no pid (an older geas) is "another process".
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t1", "record.lock"), []byte("not a pid"), 0o644))
	_, err = LockTask(ctx, root, "t1")
	require.ErrorAs(t, err, &te)
	assert.Zero(t, te.Holder)
	assert.Contains(t, err.Error(), "another process holds it")

	require.NoError(t, held.Unlock())
	l, err = LockTask(ctx, root, "t1")
	require.NoError(t, err)
	require.NoError(t, l.Unlock())
}
