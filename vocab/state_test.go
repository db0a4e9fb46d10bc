package vocab

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specEdges is SPEC §8 written out by hand, with the "any non-terminal state → blocked | escalated |
// cancelled" rule already applied, in the spec's order. It is deliberately not derived from the
// code's table: a mistake in one shows up as a disagreement with the other.
var specEdges = map[State][]State{
	Drafted:      {Ready, Blocked, Escalated, Cancelled},
	Ready:        {Implementing, Blocked, Escalated, Cancelled},
	Implementing: {Reviewed, Blocked, Escalated, Cancelled},
	Reviewed:     {Integrated, Verified, Implementing, Blocked, Escalated, Cancelled},
	Integrated:   {Verified, Implementing, Blocked, Escalated, Cancelled},
	Verified:     {Passed, Implementing, Reviewed, Integrated, Blocked, Escalated, Cancelled},
	Passed:       nil,
	Blocked:      {Ready, Implementing, Reviewed, Integrated, Escalated, Cancelled},
	Escalated:    {Ready, Implementing, Blocked, Cancelled},
	Cancelled:    nil,
}

func TestStateMachineAllPairs(t *testing.T) {
	states := []State{Drafted, Ready, Implementing, Reviewed, Integrated, Verified, Passed, Blocked, Escalated, Cancelled}
	require.Equal(t, states, States())
	require.Len(t, specEdges, 10)
	pairs := 0
	for _, from := range states {
		t.Run(string(from), func(t *testing.T) {
			assert.Equal(t, specEdges[from], Allowed(from), "Allowed(%s)", from)
			for _, to := range states {
				pairs++
				legal := slices.Contains(specEdges[from], to)
				err := CheckTransition(from, to, true)
				if legal {
					assert.NoError(t, err, "%s -> %s is an edge of SPEC §8", from, to)
					continue
				}
				var te *TransitionError
				if !assert.ErrorAs(t, err, &te, "%s -> %s is not an edge", from, to) {
					continue
				}
				assert.Equal(t, from, te.From)
				assert.Equal(t, to, te.To)
				assert.Equal(t, specEdges[from], te.Allowed)
				msg := err.Error()
				assert.Contains(t, msg, fmt.Sprintf("cannot move a task from %s to %s", from, to))
				if len(specEdges[from]) == 0 {
					assert.Contains(t, msg, string(from)+" is terminal")
				}
				for _, a := range specEdges[from] {
					assert.Contains(t, msg, string(a), "the message lists every allowed target")
				}
			}
		})
	}
	assert.Equal(t, 100, pairs)
}

func TestOnlyTheGateMovesATaskToVerified(t *testing.T) {
	for _, from := range []State{Reviewed, Integrated} {
		t.Run(string(from), func(t *testing.T) {
			err := CheckTransition(from, Verified, false)
			require.ErrorIs(t, err, ErrOnlyGateVerifies)
			assert.Contains(t, err.Error(), "geas gate")
			var te *TransitionError
			assert.False(t, errors.As(err, &te), "a legal edge taken by the wrong caller is not a non-edge")

			assert.NoError(t, CheckTransition(from, Verified, true))
		})
	}
	t.Run("a non-edge to verified is a non-edge", func(t *testing.T) {
		var te *TransitionError
		assert.ErrorAs(t, CheckTransition(Drafted, Verified, false), &te)
	})
}

func TestTransitionErrorMessage(t *testing.T) {
	tests := []struct {
		name     string
		from, to State
		want     string
	}{
		{
			"lists the allowed targets", Reviewed, Passed,
			"cannot move a task from reviewed to passed; allowed from reviewed: integrated, verified, implementing, blocked, escalated, cancelled",
		},
		{"terminal", Passed, Implementing, "cannot move a task from passed to implementing; passed is terminal"},
		{"terminal cancelled", Cancelled, Ready, "cannot move a task from cancelled to ready; cancelled is terminal"},
		{"same state", Blocked, Blocked, "the task is already blocked"},
		{"unknown target", Ready, "done", `"done" is not a task state`},
		{"unknown source", "done", Ready, `"done" is not a task state`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTransition(tc.from, tc.to, true)
			var te *TransitionError
			require.ErrorAs(t, err, &te)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParseState(t *testing.T) {
	for _, s := range States() {
		got, err := ParseState(string(s))
		require.NoError(t, err)
		assert.Equal(t, s, got)
	}
	for _, bad := range []string{"", "Verified", "done", " ready", "*"} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			_, err := ParseState(bad)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "drafted, ready")
		})
	}
}

func TestAllowedReturnsACopy(t *testing.T) {
	a := Allowed(Reviewed)
	a[0] = Passed
	assert.Equal(t, Integrated, Allowed(Reviewed)[0])
	assert.Empty(t, Allowed("nonsense"))
}

func TestErrOnlyGateVerifiesPointsAtTheGate(t *testing.T) {
	assert.True(t, strings.Contains(ErrOnlyGateVerifies.Error(), "geas gate --task"))
}
