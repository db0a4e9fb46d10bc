package cmd

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

// TestEveryTaskFlagNamesItsVariable: the help of every --task, --id and --mission flag says which
// variable stands for it, so geas gate --help tells a user that GEAS_TASK is read.
func TestEveryTaskFlagNamesItsVariable(t *testing.T) {
	root := newRootCmd(&globalOptions{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr})
	seen := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, ef := range envFlags {
			for _, name := range ef.flags {
				if f := c.Flags().Lookup(name); f != nil {
					seen++
					assert.Contains(t, f.Usage, "$"+ef.env, "%s --%s", c.CommandPath(), name)
					assert.Equal(t, 1, strings.Count(f.Usage, "$"+ef.env), "%s --%s: %q", c.CommandPath(), name, f.Usage)
				}
			}
		}
		for _, sc := range c.Commands() {
			walk(sc)
		}
	}
	walk(root)
	assert.Greater(t, seen, 20, "the walk found too few --task and --mission flags")
}

// TestHooksChooseTheirOwnTask: the hooks read GEAS_TASK after sources of their own (TaskCompleted's
// task_id first), so the root never fills in their --task: an invalid GEAS_TASK does not stop a
// TaskCompleted hook whose input names a task.
func TestHooksChooseTheirOwnTask(t *testing.T) {
	root := newRootCmd(&globalOptions{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr})
	t.Setenv(envTask, "../x")
	for _, path := range [][]string{{"hook", "claude-stop"}, {"hook", "claude-task-completed"}} {
		c, _, err := root.Find(path)
		if !assert.NoError(t, err) {
			continue
		}
		assert.NoError(t, applyEnvFlags(c), "%v", path)
		assert.False(t, c.Flags().Lookup("task").Changed, "%v", path)
	}
	c, _, err := root.Find([]string{"task", "show"})
	assert.NoError(t, err)
	assert.ErrorContains(t, applyEnvFlags(c), "GEAS_TASK: invalid task id")
}
