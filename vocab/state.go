package vocab

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// State is a task's state, stored as the "status" of its contract.json (geas v1 states).
type State string

// The task states of SPEC §8.
const (
	Drafted      State = "drafted"
	Ready        State = "ready"
	Implementing State = "implementing"
	Reviewed     State = "reviewed"
	Integrated   State = "integrated"
	Verified     State = "verified"
	Passed       State = "passed"
	Blocked      State = "blocked"
	Escalated    State = "escalated"
	Cancelled    State = "cancelled"
)

// States returns every task state, in the order of SPEC §8.
func States() []State {
	return []State{Drafted, Ready, Implementing, Reviewed, Integrated, Verified, Passed, Blocked, Escalated, Cancelled}
}

// ParseState maps a contract's status string to its State. The match is exact, as geas's is.
func ParseState(s string) (State, error) {
	st := State(s)
	if slices.Contains(States(), st) {
		return st, nil
	}
	return "", fmt.Errorf("unknown task state %q (want one of %s)", s, JoinStates(States(), ", "))
}

// IsFinished reports whether a task's state says the gate already passed it (verified or passed):
// geas gate re-checks such a task instead of gating it (SPEC §7.2).
func (s State) IsFinished() bool { return s == Verified || s == Passed }

// anyNonTerminal stands for the "any non-terminal state" row of the table.
const anyNonTerminal State = "*"

// machine is SPEC §8, row for row, in its order: the only statement of the state machine in the
// code. A row without targets is a terminal state. Verified is reachable only through the gate,
// which CheckTransition enforces separately so the table stays a copy of the spec.
var machine = []struct {
	from State
	to   []State
}{
	{Drafted, []State{Ready}},
	{Ready, []State{Implementing}},
	{Implementing, []State{Reviewed}},
	{Reviewed, []State{Integrated, Verified, Implementing}},
	{Integrated, []State{Verified, Implementing}},
	{Verified, []State{Passed, Implementing, Reviewed, Integrated}},
	{Passed, nil},
	{Blocked, []State{Ready, Implementing, Reviewed, Integrated}},
	{Escalated, []State{Ready, Implementing, Blocked}},
	{anyNonTerminal, []State{Blocked, Escalated, Cancelled}},
	{Cancelled, nil},
}

// allowed expands machine once into the targets of each state: the state's own row, then the
// any-non-terminal row, without repeats and without the state itself (staying put is not a move).
var allowed = sync.OnceValue(func() map[State][]State {
	terminal := map[State]bool{}
	for _, row := range machine {
		if row.from != anyNonTerminal && len(row.to) == 0 {
			terminal[row.from] = true
		}
	}
	out := map[State][]State{}
	for _, s := range States() {
		var to []State
		for _, row := range machine {
			if row.from != s && (row.from != anyNonTerminal || terminal[s]) {
				continue
			}
			for _, t := range row.to {
				if t != s && !slices.Contains(to, t) {
					to = append(to, t)
				}
			}
		}
		out[s] = to
	}
	return out
})

// Allowed returns the states a task in state from may move to, in the order of SPEC §8 (its own
// row first, then blocked, escalated, cancelled). It is empty for the terminal states passed and
// cancelled, and for an unknown state. Verified is listed where the edge exists, although only
// the gate may take it.
func Allowed(from State) []State {
	return slices.Clone(allowed()[from])
}

func isState(s State) bool { return slices.Contains(States(), s) }

// ErrOnlyGateVerifies is wrapped by CheckTransition when anything but the gate tries to move a task
// to verified: a pass must come from the gate's own checks, never from an agent's claim.
var ErrOnlyGateVerifies = errors.New("only `geas gate` moves a task to verified, and only on a pass: run `geas gate --task <task-id>`")

// TransitionError is a move that is not an edge of the state machine. Allowed lists the legal
// targets from From, so the message tells the caller what it could do instead.
type TransitionError struct {
	From, To State
	Allowed  []State
}

// Error says which move was refused and what the task could do instead.
func (e *TransitionError) Error() string {
	head := fmt.Sprintf("cannot move a task from %s to %s", e.From, e.To)
	switch {
	case !isState(e.From):
		return fmt.Sprintf("%s; %q is not a task state (want one of %s)", head, e.From, JoinStates(States(), ", "))
	case !isState(e.To):
		return fmt.Sprintf("%s; %q is not a task state (want one of %s)", head, e.To, JoinStates(States(), ", "))
	case len(e.Allowed) == 0:
		return fmt.Sprintf("%s; %s is terminal", head, e.From)
	case e.From == e.To:
		return fmt.Sprintf("%s; the task is already %s (allowed from %s: %s)", head, e.From, e.From, JoinStates(e.Allowed, ", "))
	}
	return fmt.Sprintf("%s; allowed from %s: %s", head, e.From, JoinStates(e.Allowed, ", "))
}

// JoinStates writes states as text, separated by sep ("reviewed or integrated").
func JoinStates(states []State, sep string) string {
	parts := make([]string, len(states))
	for i, s := range states {
		parts[i] = string(s)
	}
	return strings.Join(parts, sep)
}

// CheckTransition reports whether a task may move from one state to another. It returns nil for
// an edge of SPEC §8, a *TransitionError for anything else (including from == to and unknown
// states), and an error wrapping ErrOnlyGateVerifies for an edge to verified when byGate is false.
func CheckTransition(from, to State, byGate bool) error {
	targets := Allowed(from)
	if !isState(to) || !slices.Contains(targets, to) {
		return &TransitionError{From: from, To: to, Allowed: targets}
	}
	if to == Verified && !byGate {
		return fmt.Errorf("cannot move a task from %s to %s: %w", from, to, ErrOnlyGateVerifies)
	}
	return nil
}

// PathTo returns the shortest walk of the state machine from a task's state to one of targets,
// without from itself (the states to give `geas task transition --to`, in order), and whether
// there is one. It walks the work's own edges: never through verified, which only the gate moves
// a task to, nor through blocked, escalated or cancelled (a detour through blocked would skip the
// review); from already among targets is an empty walk.
func PathTo(from State, targets []State) ([]State, bool) {
	if slices.Contains(targets, from) {
		return nil, true
	}
	prev := map[State]State{from: ""}
	queue := []State{from}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, t := range Allowed(s) {
			if _, seen := prev[t]; seen || t == Verified || t == Blocked || t == Escalated || t == Cancelled {
				continue
			}
			prev[t] = s
			if slices.Contains(targets, t) {
				var path []State
				for at := t; at != from; at = prev[at] {
					path = append(path, at)
				}
				slices.Reverse(path)
				return path, true
			}
			queue = append(queue, t)
		}
	}
	return nil, false
}
