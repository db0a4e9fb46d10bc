//go:build unix

package fsutil

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// replaceLock puts something other than the locked file at the lock's path, the way an agent
// that can write .geas would.
var replaceLock = map[string]func(t *testing.T, dir, path string){
	"removed": func(t *testing.T, _, path string) { require.NoError(t, os.Remove(path)) },
	"renamed over": func(t *testing.T, dir, path string) {
		other := filepath.Join(dir, "other")
		require.NoError(t, os.WriteFile(other, []byte("1\n"), 0o644))
		require.NoError(t, os.Rename(other, path))
	},
	"symlink": func(t *testing.T, dir, path string) {
		target := filepath.Join(dir, "target")
		require.NoError(t, os.WriteFile(target, []byte("keep\n"), 0o644))
		require.NoError(t, os.Remove(path))
		require.NoError(t, os.Symlink("target", path))
	},
	"dangling symlink": func(t *testing.T, _, path string) {
		require.NoError(t, os.Remove(path))
		require.NoError(t, os.Symlink("nowhere", path))
	},
	"directory": func(t *testing.T, _, path string) {
		require.NoError(t, os.Remove(path))
		require.NoError(t, os.Mkdir(path, 0o755))
	},
	"fifo": func(t *testing.T, _, path string) {
		require.NoError(t, os.Remove(path))
		require.NoError(t, unix.Mkfifo(path, 0o644))
	},
}

// TestALockWhoseFileWasReplacedIsNotHeld: once the lock file is removed or replaced, the holder
// is told (Held), and a second Acquire takes a lock of its own on what the path names now
// instead of waiting on the orphaned file — after which the first holder must write nothing.
func TestALockWhoseFileWasReplacedIsNotHeld(t *testing.T) {
	for how, replace := range replaceLock {
		t.Run(how, func(t *testing.T) {
			root, dir := openRoot(t)
			require.NoError(t, root.MkdirAll("tasks/t1", 0o755))
			first, err := lockTask(t.Context(), root, "tasks/t1")
			require.NoError(t, err)
			defer first.Unlock()
			require.NoError(t, first.Held(), "control: an untouched lock is held")

			replace(t, filepath.Join(dir, "tasks/t1"), filepath.Join(dir, "tasks/t1/record.lock"))
			err = first.Held()
			require.ErrorIs(t, err, ErrLockLost)
			assert.Contains(t, err.Error(), ".geas/tasks/t1/record.lock")

			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			second, err := lockTask(ctx, root, "tasks/t1")
			require.NoError(t, err)
			defer second.Unlock()
			require.NoError(t, second.Held())
			fi, err := os.Lstat(filepath.Join(dir, "tasks/t1/record.lock"))
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular(), "the lock is taken on a regular file, not a %s", fi.Mode().Type())
			require.ErrorIs(t, first.Held(), ErrLockLost, "the first holder stays lost")
			if how == "symlink" {
				b, err := os.ReadFile(filepath.Join(dir, "tasks/t1/target"))
				require.NoError(t, err)
				assert.Equal(t, "keep\n", string(b), "a link's target is neither locked nor written")
			}
		})
	}
}

// TestALockIsTakenOnTheFileItsNameNames: whatever an agent put at the lock's path before the
// run (a link, a directory, a FIFO), the lock is taken on a regular file at that path, without
// blocking, and holds against a second Acquire (the control: a real lock still excludes).
func TestALockIsTakenOnTheFileItsNameNames(t *testing.T) {
	for how, replace := range replaceLock {
		if how == "removed" || how == "renamed over" {
			continue // a missing or regular file is the ordinary case
		}
		t.Run(how, func(t *testing.T) {
			root, dir := openRoot(t)
			require.NoError(t, root.MkdirAll("tasks/t1", 0o755))
			p := filepath.Join(dir, "tasks/t1/record.lock")
			require.NoError(t, os.WriteFile(p, nil, 0o644))
			replace(t, filepath.Join(dir, "tasks/t1"), p)

			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			l, err := lockTask(ctx, root, "tasks/t1")
			require.NoError(t, err)
			defer l.Unlock()
			require.NoError(t, l.Held())
			fi, err := os.Lstat(p)
			require.NoError(t, err)
			assert.True(t, fi.Mode().IsRegular())

			short, cancel2 := context.WithTimeout(t.Context(), 50*time.Millisecond)
			defer cancel2()
			_, err = lockTask(short, root, "tasks/t1")
			require.ErrorIs(t, err, context.DeadlineExceeded, "the lock taken excludes a second holder")
		})
	}
}

// TestALockThatCannotBeMadeIsAnError: a non-empty directory at the lock's path can be neither
// removed nor locked; Acquire says so instead of locking something else or hanging.
func TestALockThatCannotBeMadeIsAnError(t *testing.T) {
	root, _ := openRoot(t)
	require.NoError(t, root.MkdirAll("tasks/t1/record.lock/sub", 0o755))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := lockTask(ctx, root, "tasks/t1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "directory")
	assert.NotErrorIs(t, err, context.DeadlineExceeded)
}

// TestAWaiterFollowsAReplacedLockFile: a run waiting on a lock whose file is then removed or
// replaced (its holder will never release what the path names now) takes the lock on the new
// file, and the old holder learns it lost the lock.
func TestAWaiterFollowsAReplacedLockFile(t *testing.T) {
	root, dir := openRoot(t)
	require.NoError(t, root.MkdirAll("tasks/t1", 0o755))
	first, err := lockTask(t.Context(), root, "tasks/t1")
	require.NoError(t, err)
	defer first.Unlock()
	got := make(chan error, 1)
	go func() {
		l, err := lockTask(t.Context(), root, "tasks/t1")
		if err == nil {
			err = errors.Join(l.Held(), l.Unlock())
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("control: the waiter returned while the lock was held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, os.Remove(filepath.Join(dir, "tasks/t1/record.lock")))
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter kept waiting on a removed lock file")
	}
	require.ErrorIs(t, first.Held(), ErrLockLost)
}

// TestLockedWritersStaySerialUnderRandomReplacement: many holders increment a counter under the
// lock, checking Held before they write, while the lock file is removed and replaced at random.
// A holder whose check passed and who then writes is never overlapped by another such holder on
// the same counter value: every value is written once, none is lost.
func TestLockedWritersStaySerialUnderRandomReplacement(t *testing.T) {
	root, dir := openRoot(t)
	require.NoError(t, root.MkdirAll("tasks/t1", 0o755))
	lockPath := filepath.Join(dir, "tasks/t1/record.lock")
	const workers, rounds = 8, 40

	var mu sync.Mutex // guards the counter's file: the race under test is the lock's, not the file's
	counter, seen := 0, map[int]int{}
	var committed, lost atomic.Int64
	stop := make(chan struct{})
	var vandal sync.WaitGroup
	vandal.Add(1)
	go func() {
		defer vandal.Done()
		r := rand.New(rand.NewPCG(1, 2))
		kinds := []string{"removed", "renamed over", "symlink", "directory", "fifo"}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(r.IntN(3000)) * time.Microsecond):
			}
			tmp := filepath.Join(dir, "tasks/t1", fmt.Sprintf("v%d", i))
			switch kinds[r.IntN(len(kinds))] {
			case "removed":
				_ = os.Remove(lockPath)
			case "renamed over":
				_ = os.WriteFile(tmp, nil, 0o644)
				_ = os.Rename(tmp, lockPath)
			case "symlink":
				_ = os.Symlink("nowhere", tmp)
				_ = os.Rename(tmp, lockPath)
			case "directory":
				if os.Remove(lockPath) == nil {
					_ = os.Mkdir(lockPath, 0o755)
				}
			case "fifo":
				_ = unix.Mkfifo(tmp, 0o644)
				_ = os.Rename(tmp, lockPath)
			}
		}
	}()

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				l, err := lockTask(t.Context(), root, "tasks/t1")
				if err != nil {
					errs <- err
					return
				}
				// read, then write back: a read-modify-write as a gate run does
				mu.Lock()
				read := counter
				mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
				mu.Lock()
				if l.Held() == nil {
					if counter != read {
						mu.Unlock()
						_ = l.Unlock()
						errs <- fmt.Errorf("a holder that still held the lock found %d where it read %d: two holders overlapped", counter, read)
						return
					}
					counter = read + 1
					seen[counter]++
					committed.Add(1)
				} else {
					lost.Add(1)
				}
				mu.Unlock()
				_ = l.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	vandal.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, int(committed.Load()), counter, "every committed write counted once")
	for v, n := range seen {
		assert.Equal(t, 1, n, "value %d written %d times", v, n)
	}
	t.Logf("%d writes committed, %d holders found their lock lost and wrote nothing", committed.Load(), lost.Load())
}
