package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// harnessStop runs HarnessStop on the fixture's task with the harness signal s (unknown when nil)
// and the harness's own stop number stops.
func (f *fixture) harnessStop(s *StopSignal, stops int) StopDecision {
	f.T.Helper()
	o := StopOptions{Stops: stops}
	if s != nil {
		o.Signal, o.SignalKnown = *s, true
	}
	return HarnessStop(f.T.Context(), Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}, o)
}

var continuing = &StopSignal{Active: true, Name: "stop_hook_active"}

// TestAnUnchangedAttemptIsLetGoAtTheLoopCap: a verified task set by hand holds every stop, and its
// re-check records nothing, so no budget ends the loop of a harness that caps none. The hook holds
// the stops before the cap and lets the StopLoopCap-th go, saying the task is not verified; the
// task's state and history are untouched.
func TestAnUnchangedAttemptIsLetGoAtTheLoopCap(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.Contract(func(m map[string]any) { m["status"] = "verified" })
	for i := 1; i < StopLoopCap; i++ {
		d := f.harnessStop(continuing, 0)
		require.True(t, d.Block, "stop %d is held: %s", i, d.Message)
		assert.Contains(t, d.Message, "state_unverified")
	}
	d := f.harnessStop(continuing, 0)
	assert.False(t, d.Block)
	assert.Contains(t, d.Message, "task t1 is NOT verified: this is stop 8 in a row on an unchanged attempt")
	assert.Contains(t, d.Message, "state_unverified", "the message says what the gate found")
	assert.NoFileExists(t, f.Path(".geas/"+stopStreakFile(Task{Mission: testMission, ID: testTask})), "an allowed stop ends the count")
	assert.Equal(t, "verified", f.Status())
	// The harness's own count (Cursor's loop_count + 1) is used when it sends one.
	assert.True(t, f.harnessStop(continuing, StopLoopCap-1).Block)
	assert.False(t, f.harnessStop(continuing, StopLoopCap).Block)
}

// TestAStopCountEditedByHandNeverPasses: agents can write the count. Raised, it lets the stop go
// sooner, with the message that the task is not verified, never silently; a pass is a pass
// whatever it says. The count of another attempt, or one the hook did not write, does not carry.
func TestAStopCountEditedByHandNeverPasses(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.Contract(func(m map[string]any) { m["status"] = "verified" })
	name := ".geas/" + stopStreakFile(Task{Mission: testMission, ID: testTask})
	require.True(t, f.harnessStop(continuing, 0).Block)
	attempt := string(f.Read(name))
	f.EditJSON(name, func(m map[string]any) { m["held"] = 500 })
	d := f.harnessStop(continuing, 0)
	assert.False(t, d.Block)
	assert.Contains(t, d.Message, "NOT verified")

	for _, planted := range []string{`{"attempt":"fail|recheck=false|a|b|c","held":500}`, `{"attempt":7}`, `[]`, "held: 500"} {
		f.Write(name, planted)
		assert.True(t, f.harnessStop(continuing, 0).Block, "a count of another attempt, or none, holds the stop: %s", planted)
	}
	assert.Contains(t, attempt, `"held":1`)

	// The honest control: the task, moved back and passing, lets the agent stop silently whatever
	// the count says.
	g := newFixture(t, true)
	g.Write(name, `{"attempt":"x","held":500}`)
	d = g.harnessStop(continuing, 0)
	assert.Equal(t, StopDecision{}, d, "a pass is silent")
	assert.Equal(t, "verified", g.Status())
}

// TestTheStopCountStandsInForAMissingSignal: a harness that sends no "already continuing" signal
// (GitHub Copilot's subagentStop) is answered as if the stop continued when the hook held the stop
// before it on the same attempt: a fail of an unchanged attempt is held once, then let go.
func TestTheStopCountStandsInForAMissingSignal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.Contract(func(m map[string]any) { m["eval_commands"] = []any{"exit 1"} })
	f.Commit("a failing eval")
	d := f.harnessStop(nil, 0)
	require.True(t, d.Block, d.Message)
	d = f.harnessStop(nil, 0)
	assert.False(t, d.Block)
	assert.Contains(t, d.Message, "the stop is allowed because it already followed a block (the hook's count of stops it held on this attempt: 1)")
}

// TestTheStopCountIsNotWrittenThroughALink: a link planted in place of the count's directory would
// take the count into a task's evidence; the hook writes nothing there and says it cannot count.
func TestTheStopCountIsNotWrittenThroughALink(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.Contract(func(m map[string]any) { m["status"] = "verified" })
	require.NoError(t, os.MkdirAll(f.Path(".geas/state"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join("..", filepath.FromSlash(testTaskDir), "evidence"), f.Path(".geas/"+stopStreakDir)))
	before, err := os.ReadDir(f.Path(".geas/" + testTaskDir + "/evidence"))
	require.NoError(t, err)
	d := f.harnessStop(continuing, 0)
	assert.True(t, d.Block)
	assert.Contains(t, d.Message, "the hook could not record its count of held stops")
	after, err := os.ReadDir(f.Path(".geas/" + testTaskDir + "/evidence"))
	require.NoError(t, err)
	assert.Len(t, after, len(before), "nothing was written through the link")
}

// TestAStopCountIsKeptPerSession: the count is of consecutive stops in one session of the harness;
// another session's count, however high, does not let this one's first stop go.
func TestAStopCountIsKeptPerSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.Contract(func(m map[string]any) { m["status"] = "verified" })
	stop := func(session string) StopDecision {
		return HarnessStop(t.Context(), Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir},
			StopOptions{Signal: *continuing, SignalKnown: true, Session: session})
	}
	require.True(t, stop("s1").Block)
	f.EditJSON(".geas/"+stopStreakFile(Task{Mission: testMission, ID: testTask}), func(m map[string]any) { m["held"] = 500 })
	assert.True(t, stop("s2").Block, "another session starts its own count")
	assert.True(t, stop("s1").Block, "s2's count replaced s1's")
}

// TestAStopCountSignedWithTheKeyCannotBeRaisedByHand: with GEAS_GATE_KEY set the hook signs its
// count, and a count raised by hand (or written without the key) counts as none: the stop is held
// as a first one. The honest control: the hook's own signed count carries from stop to stop.
func TestAStopCountSignedWithTheKeyCannotBeRaisedByHand(t *testing.T) {
	t.Setenv("GEAS_GATE_KEY", "the-gate-key")
	f := newFixture(t, true)
	f.Write(".geas/gate-policy.json", `{"key_exposure": "accept"}`)
	f.Contract(func(m map[string]any) { m["status"] = "verified" })
	task := Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir}
	name := ".geas/" + stopStreakFile(task)

	require.True(t, f.harnessStop(continuing, 0).Block)
	require.True(t, f.harnessStop(continuing, 0).Block)
	s, err := readStopStreak(task, []byte("the-gate-key"))
	require.NoError(t, err)
	assert.Equal(t, 2, s.Held, "the hook's signed count carries")
	assert.Regexp(t, `"hmac":"[0-9a-f]{64}"`, string(f.Read(name)))

	f.EditJSON(name, func(m map[string]any) { m["held"] = 500 })
	_, err = readStopStreak(task, []byte("the-gate-key"))
	require.ErrorContains(t, err, "its hmac does not verify with GEAS_GATE_KEY")
	d := f.harnessStop(continuing, 0)
	assert.True(t, d.Block, "a raised count counts as none: %s", d.Message)
	s, err = readStopStreak(task, []byte("the-gate-key"))
	require.NoError(t, err)
	assert.Equal(t, 1, s.Held, "the count starts again")

	// A count written without the key (the agent's own hook run) is not the gate's either.
	require.NoError(t, writeStopStreak(task, stopStreak{Attempt: s.Attempt, Held: StopLoopCap - 1}, nil))
	assert.True(t, f.harnessStop(continuing, 0).Block)
}

// TestASessionIdNamesNoFile: the harness's session id is counted in (digested), never part of a
// file name: an id with path separators, dots or a NUL writes the count where every count goes,
// and nothing elsewhere.
func TestASessionIdNamesNoFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	f.Contract(func(m map[string]any) { m["status"] = "verified" })
	for _, session := range []string{"../../../outside", "/tmp/x", "a/b\\c", "..", "s\x00t", strings.Repeat("s", 1<<16)} {
		d := HarnessStop(t.Context(), Task{Project: f.Open(), Mission: testMission, ID: testTask, Dir: testTaskDir},
			StopOptions{Signal: *continuing, SignalKnown: true, Session: session})
		require.True(t, d.Block, d.Message)
		entries, err := os.ReadDir(f.Path(".geas/" + stopStreakDir))
		require.NoError(t, err)
		require.Len(t, entries, 1, "one count, of the task")
		assert.Equal(t, testMission+"."+testTask+".json", entries[0].Name())
	}
	assert.NoFileExists(t, filepath.Join(f.Path(".."), "outside"))
	assert.NoFileExists(t, f.Path(".geas/outside"))
}
