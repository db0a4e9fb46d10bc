package cmd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
)

// holdLockEnv names the task directory TestHelperHoldsTheLock locks.
const holdLockEnv = "GEAS_TEST_HOLD_LOCK"

// TestHelperHoldsTheLock is not a test: run by TestALockWaitIsReported in a process of its own, it
// takes the task lock of $GEAS_TEST_HOLD_LOCK (a .geas directory and a task directory under it),
// says "held" and keeps the lock until its standard input closes, like a stopped gate run.
func TestHelperHoldsTheLock(t *testing.T) {
	spec := os.Getenv(holdLockEnv)
	if spec == "" {
		t.Skip("helper process of TestALockWaitIsReported")
	}
	root, err := os.OpenRoot(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(spec)))))
	require.NoError(t, err)
	rel, err := filepath.Rel(root.Name(), spec)
	require.NoError(t, err)
	l, err := record.LockTask(t.Context(), root, filepath.ToSlash(rel))
	require.NoError(t, err)
	fmt.Println("held")
	_, _ = io.Copy(io.Discard, os.Stdin)
	require.NoError(t, l.Unlock())
}

// holdLock starts a process that holds the example task's lock until the test ends, and returns
// its pid.
func holdLock(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldsTheLock$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+filepath.Join(dir, taskDir))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the helper took the lock")
	require.Equal(t, "held\n", line)
	return cmd.Process.Pid
}

// TestALockWaitIsReported (SPEC §7.3): a run that waits for a task lock held by
// another process says so on stderr, naming the holder's pid, and gives up after --lock-timeout
// (or $GEAS_LOCK_TIMEOUT) with exit 3 and a message that says what happened; nothing is recorded.
// Only the outcome is asserted, never how long anything took.
func TestALockWaitIsReported(t *testing.T) {
	dir := hostileBase(t)
	pid := holdLock(t, dir)
	recordBefore, err := os.ReadFile(filepath.Join(dir, taskDir, "record.json"))
	require.NoError(t, err)

	run := func(env []string, args ...string) (int, string, string) {
		cmd := exec.Command("geas", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), stdout.String(), stderr.String()
		}
		require.NoError(t, err)
		return 0, stdout.String(), stderr.String()
	}
	lockName := ".geas/missions/m1/tasks/t1/record.lock"
	waiting := fmt.Sprintf("geas: waiting for the task lock %s, held by process %d; giving up after 2s", lockName, pid)
	gaveUp := fmt.Sprintf("gave up waiting for the task lock %s after 2s: process %d holds it", lockName, pid)

	code, stdout, stderr := run(nil, "--format", "json", "--lock-timeout", "2s", "gate", "--task", "t1")
	assert.Equal(t, 3, code, "a lock wait that gives up is exit 3")
	assert.Contains(t, stderr, waiting+" (--lock-timeout)")
	assert.Contains(t, stderr, gaveUp)
	assert.Contains(t, stdout, gaveUp, "the JSON error says it too")

	code, _, stderr = run([]string{"GEAS_LOCK_TIMEOUT=2s"}, "task", "budget", "grant", "--task", "t1", "--retries", "1",
		"--by", "orchestration-authority", "--reason", "test")
	assert.Equal(t, 3, code, "every command that takes the lock gives up the same way")
	assert.Contains(t, stderr, waiting+" ("+lockTimeoutEnv+")")
	assert.Contains(t, stderr, gaveUp)

	code, _, stderr = run([]string{"GEAS_LOCK_TIMEOUT=soon"}, "gate", "--task", "t1")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, `GEAS_LOCK_TIMEOUT="soon": want a positive duration`)
	code, _, stderr = run(nil, "--lock-timeout", "-1s", "gate", "--task", "t1")
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr, "--lock-timeout -1s: want a positive duration")

	recordAfter, err := os.ReadFile(filepath.Join(dir, taskDir, "record.json"))
	require.NoError(t, err)
	assert.Equal(t, string(recordBefore), string(recordAfter), "nothing was recorded while the lock was held")
}
