package project

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAnUnknownTaskListsTheMissionsTasks: a NoTaskError that ListTasks filled names the mission's
// tasks, at most maxListedTasks of them, and the ones close to what was typed; unfilled, it says
// only that the task is missing.
func TestAnUnknownTaskListsTheMissionsTasks(t *testing.T) {
	t.Parallel()
	plain := &NoTaskError{Mission: "m1", Task: "dpeth"}
	assert.Equal(t, `no task "dpeth" in mission "m1" (no .geas/missions/m1/tasks/dpeth/contract.json)`, plain.Error())

	listed := &NoTaskError{Mission: "m1", Task: "dpeth", listed: true, Tasks: []string{"depth", "t1"}}
	listed.Near = nearIDs(listed.Task, listed.Tasks)
	assert.Contains(t, listed.Error(), `; tasks: depth, t1; did you mean depth?`)

	var many []string
	for i := range 25 {
		many = append(many, fmt.Sprintf("task-%02d", i))
	}
	big := &NoTaskError{Mission: "m1", Task: "zzz", listed: true, Tasks: many, Near: nearIDs("zzz", many)}
	assert.Contains(t, big.Error(), "task-19 and 5 more")
	assert.NotContains(t, big.Error(), "task-20")
	assert.NotContains(t, big.Error(), "did you mean")

	empty := &NoTaskError{Mission: "m1", Task: "t1", listed: true}
	assert.Contains(t, empty.Error(), "; the mission has no tasks")
}

func TestNearIDs(t *testing.T) {
	t.Parallel()
	ids := []string{"depth", "Depth-2", "t1", "t2", "width"}
	assert.Equal(t, []string{"depth"}, nearIDs("dpeth", ids))
	assert.Equal(t, []string{"depth", "Depth-2"}, nearIDs("DEP", ids), "a prefix, any case")
	assert.Equal(t, []string{"t1", "t2"}, nearIDs("t3", ids))
	assert.Empty(t, nearIDs("zzzzzz", ids))
}
