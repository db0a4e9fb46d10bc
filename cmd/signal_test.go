package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSignalKillsEvalAndWritesNothing (SPEC §7.3): SIGINT or SIGTERM during a long eval command
// kills the command's process group, writes nothing, and exits 3.
func TestSignalKillsEvalAndWritesNothing(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := gitProject(t)
			pidFile := filepath.Join(t.TempDir(), "pids")
			editContract(t, dir, func(c map[string]any) {
				// The command starts a background sleeper too: the whole group must die.
				c["eval_commands"] = []any{"sleep 300 & echo $$ $! > " + pidFile + "; wait"}
			})
			before := snapshot(t, dir)

			cmd := exec.Command("geas", "-C", dir, "gate", "--task", "t1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			var pids []int
			require.Eventually(t, func() bool {
				b, err := os.ReadFile(pidFile)
				if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
					return false
				}
				for _, f := range strings.Fields(string(b)) {
					n, _ := strconv.Atoi(f)
					pids = append(pids, n)
				}
				return len(pids) == 2
			}, 10*time.Second, 20*time.Millisecond)

			require.NoError(t, cmd.Process.Signal(sig))
			err := cmd.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "geas should exit non-zero, got %v", err)
			assert.Equal(t, 3, ee.ExitCode(), "stderr: %s", stderr.String())
			assert.Contains(t, stderr.String(), "interrupted")

			for _, pid := range pids {
				assert.Eventually(t, func() bool {
					return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
				}, 5*time.Second, 20*time.Millisecond, "process %d of the eval group is still alive", pid)
			}
			assert.Equal(t, before, snapshot(t, dir), "nothing under .geas changed")
		})
	}
}

// snapshot maps every file under .geas (except the lock file, which exists once any writer ran)
// to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(dir, ".geas")
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() == "record.lock" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(b)
		return nil
	}))
	return out
}
