package fsutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLockSerializesOneTask(t *testing.T) {
	root, _ := openRoot(t)
	require.NoError(t, root.MkdirAll("missions/m1/tasks/t1", 0o755))
	first, err := lockTask(t.Context(), root, "missions/m1/tasks/t1")
	require.NoError(t, err)

	var released atomic.Bool
	acquired := make(chan error, 1)
	go func() {
		second, err := lockTask(t.Context(), root, "missions/m1/tasks/t1")
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
		t.Fatalf("second Acquire returned while the first lock was held: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	released.Store(true)
	require.NoError(t, first.Unlock())
	select {
	case err := <-acquired:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("second Acquire never returned after the first was released")
	}
}

func TestLockDifferentTasksDoNotWait(t *testing.T) {
	root, _ := openRoot(t)
	for _, task := range []string{"t1", "t2"} {
		require.NoError(t, root.MkdirAll("missions/m1/tasks/"+task, 0o755))
	}
	held, err := lockTask(t.Context(), root, "missions/m1/tasks/t1")
	require.NoError(t, err)
	defer held.Unlock()

	// A generous deadline: the point is that this does not wait for t1, not how fast it is.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	other, err := lockTask(ctx, root, "missions/m1/tasks/t2")
	require.NoError(t, err)
	assert.NoError(t, other.Unlock())
}

func TestLockHonoursContext(t *testing.T) {
	root, _ := openRoot(t)
	require.NoError(t, root.MkdirAll("missions/m1/tasks/t1", 0o755))
	held, err := lockTask(t.Context(), root, "missions/m1/tasks/t1")
	require.NoError(t, err)
	defer held.Unlock()

	t.Run("cancelled while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			l, err := lockTask(ctx, root, "missions/m1/tasks/t1")
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
			t.Fatal("Acquire ignored the cancellation")
		}
	})
	t.Run("deadline passes while waiting", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		defer cancel()
		_, err := lockTask(ctx, root, "missions/m1/tasks/t1")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("already cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := lockTask(ctx, root, "missions/m1/tasks/t2")
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestLockFileIsKeptAndUnlockIsIdempotent(t *testing.T) {
	root, _ := openRoot(t)
	require.NoError(t, root.MkdirAll("t1", 0o755))
	l, err := lockTask(t.Context(), root, "t1")
	require.NoError(t, err)
	require.NoError(t, l.Unlock())
	assert.NoError(t, l.Unlock())
	_, err = root.Stat("t1/record.lock")
	assert.NoError(t, err, "the lock file is never deleted")
	again, err := lockTask(t.Context(), root, "t1")
	require.NoError(t, err)
	assert.NoError(t, again.Unlock())
}

// TestALockWaitNamesTheHolderAndGivesUp (SPEC §7.3): the holder writes its pid into record.lock;
// a waiter is told who holds the lock once the notice time has passed, and gives up after its
// timeout with a *LockTimeoutError naming the holder. Once the lock is free it is taken at once.
func TestALockWaitNamesTheHolderAndGivesUp(t *testing.T) {
	root, dir := openRoot(t)
	require.NoError(t, root.MkdirAll("t1", 0o755))
	held, err := lockTask(t.Context(), root, "t1")
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
	l, err := lockTask(ctx, root, "t1") // a second open file description: flock conflicts within a process too
	assert.Nil(t, l)
	var te *LockTimeoutError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, os.Getpid(), te.Holder)
	assert.Equal(t, []int{os.Getpid()}, notices, "one notice, naming the holder")
	assert.Contains(t, err.Error(), fmt.Sprintf("gave up waiting for the task lock .geas/t1/record.lock after 300ms: process %d holds it", os.Getpid()))

	// A holder that wrote no pid (an older geas) is "another process".
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t1", "record.lock"), []byte("not a pid"), 0o644))
	_, err = lockTask(ctx, root, "t1")
	require.ErrorAs(t, err, &te)
	assert.Zero(t, te.Holder)
	assert.Contains(t, err.Error(), "another process holds it")

	require.NoError(t, held.Unlock())
	l, err = lockTask(ctx, root, "t1")
	require.NoError(t, err)
	require.NoError(t, l.Unlock())
}

// lockTask takes the lock of task directory dir as record.LockTask names it.
func lockTask(ctx context.Context, root *os.Root, dir string) (*Lock, error) {
	return Acquire(ctx, root, dir+"/record.lock", ".geas/"+dir+"/record.lock")
}
