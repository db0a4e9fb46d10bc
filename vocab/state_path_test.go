package vocab

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestThePathToAGateableStateIsAWalkOfTheMachine: the walk a state_ineligible error names is the
// shortest one, every step an edge of SPEC §8 taken by hand (never verified), and there is none
// out of a terminal state.
func TestThePathToAGateableStateIsAWalkOfTheMachine(t *testing.T) {
	cases := []struct {
		from    State
		targets []State
		want    []State
		ok      bool
	}{
		{Drafted, []State{Integrated}, []State{Ready, Implementing, Reviewed, Integrated}, true},
		{Implementing, []State{Reviewed}, []State{Reviewed}, true},
		{Escalated, []State{Integrated}, []State{Implementing, Reviewed, Integrated}, true},
		{Blocked, []State{Reviewed, Integrated}, []State{Reviewed}, true},
		{Integrated, []State{Integrated}, nil, true},
		{Cancelled, []State{Integrated}, nil, false},
		{Passed, []State{Reviewed}, nil, false},
	}
	for _, c := range cases {
		got, ok := PathTo(c.from, c.targets)
		assert.Equal(t, c.ok, ok, "%s -> %v", c.from, c.targets)
		assert.Equal(t, c.want, got, "%s -> %v", c.from, c.targets)
		at := c.from
		for _, s := range got {
			assert.NoError(t, CheckTransition(at, s, false), "%s -> %s", at, s)
			at = s
		}
	}
}
