package cmd

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// hookStop runs geas hook claude-stop on t1 in-process, as a first stop or as the stop after a
// held one (stop_hook_active), and returns the exit code and the decoded answer (zero when stdout
// is empty: the stop is allowed silently).
func hookStop(t *testing.T, dir string, active bool) (int, claudeStopOutput, string) {
	t.Helper()
	in := `{"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": false}`
	if active {
		in = strings.Replace(in, "false", "true", 1)
	}
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), []string{"-C", dir, "hook", "claude-stop", "--task", "t1"}, strings.NewReader(in), &stdout, &stderr)
	var out claudeStopOutput
	if s := strings.TrimSpace(stdout.String()); s != "" {
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), "stdout %s", s)
	}
	return code, out, stderr.String()
}

// setStatus hand-edits the status of t1's contract, as an agent with write access could.
func setStatus(t *testing.T, dir, status string) {
	t.Helper()
	editContract(t, dir, func(c map[string]any) { c["status"] = status })
}

// TestTheHookTrustsNoStateItDidNotVerify: the Stop hook lets an agent stop only on a state it
// verified (SPEC §9). A verified or passed state set by hand with no gate pass is
// re-checked and held; escalated, blocked or cancelled set by hand are held on the first stop; a
// gate that cannot run holds the first stop with its error and allows the next (never a loop).
// Every answer is exit 0 (Claude Code reads the decision, not the exit code), and none of these
// writes a gate run.
func TestTheHookTrustsNoStateItDidNotVerify(t *testing.T) {
	t.Parallel()
	type want struct {
		firstHeld, secondHeld bool
		text                  string // in the reason or the systemMessage of both answers
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want
	}{
		{"verified set by hand", func(t *testing.T, dir string) { setStatus(t, dir, "verified") },
			want{true, true, "state_unverified"}},
		{"passed set by hand", func(t *testing.T, dir string) { setStatus(t, dir, "passed") },
			want{true, false, "state_unverified"}},
		{"escalated set by hand", func(t *testing.T, dir string) { setStatus(t, dir, "escalated") },
			want{true, false, "no fail spent the last retry"}},
		{"blocked set by hand", func(t *testing.T, dir string) { setStatus(t, dir, "blocked") },
			want{true, false, "fewer than the consecutive-error limit 3"}},
		{"cancelled set by hand", func(t *testing.T, dir string) { setStatus(t, dir, "cancelled") },
			want{true, false, "no task_transition to cancelled was recorded"}},
		{"gate-logs is a file", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, taskDir, "gate-logs"), []byte("x"), 0o644))
		}, want{true, false, "gate-logs"}},
		{"record.lock is a directory", func(t *testing.T, dir string) {
			// with an entry: an empty directory is not a lock and is replaced by a lock file
			require.NoError(t, os.MkdirAll(filepath.Join(dir, taskDir, "record.lock", "kept"), 0o755))
		}, want{true, false, "record.lock"}},
		{"verified, record.lock is a directory", func(t *testing.T, dir string) {
			setStatus(t, dir, "verified")
			require.NoError(t, os.MkdirAll(filepath.Join(dir, taskDir, "record.lock", "kept"), 0o755))
		}, want{true, false, "record.lock"}},
		{"task directory is a symlink", func(t *testing.T, dir string) {
			real := filepath.Join(dir, ".geas/missions/m1/tasks/real")
			require.NoError(t, os.Rename(filepath.Join(dir, taskDir), real))
			require.NoError(t, os.Symlink("real", filepath.Join(dir, taskDir)))
		}, want{true, false, "symbolic link"}},
		{"contract deleted", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, taskDir, "contract.json")))
		}, want{true, false, `no task "t1"`}},
		{"no .geas state names the mission", func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, ".geas/state/run.json")))
			// A second mission: with one, it would be the default (SPEC §9).
			require.NoError(t, os.MkdirAll(filepath.Join(dir, ".geas/missions/m2/tasks"), 0o755))
		}, want{true, false, "no mission"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := gitProject(t)
			editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
			tc.setup(t, dir)
			for i, active := range []bool{false, true} {
				held := tc.firstHeld
				if active {
					held = tc.secondHeld
				}
				code, out, stderr := hookStop(t, dir, active)
				assert.Equal(t, 0, code, "stop %d: stderr %s", i+1, stderr)
				if held {
					assert.Equal(t, "block", out.Decision, "stop %d is held: %+v", i+1, out)
					assert.Contains(t, out.Reason, tc.text, "stop %d", i+1)
					assert.Empty(t, out.SystemMessage)
				} else {
					assert.Empty(t, out.Decision, "stop %d is allowed: %+v", i+1, out)
					assert.Contains(t, out.SystemMessage, tc.text, "stop %d: the allowed stop says why", i+1)
				}
			}
			// Nothing of a gate run was recorded: no gate_result event, no history.
			events, _ := os.ReadFile(filepath.Join(dir, ".geas/state/events.jsonl"))
			assert.NotContains(t, string(events), `"gate_result"`)
			if b, err := os.ReadFile(filepath.Join(dir, ".geas/missions/m1/tasks/t1/record.json")); err == nil {
				assert.NotContains(t, string(b), "gate_history")
			}
			_, err := os.Stat(filepath.Join(dir, ".geas/missions/m1/tasks/t1", record.HistoryFile))
			assert.ErrorIs(t, err, fs.ErrNotExist, "no history entry")
		})
	}

	// The control: a pass the gate recorded holds on re-check, and the stop is allowed silently,
	// with nothing more recorded.
	t.Run("verified by the gate", func(t *testing.T) {
		t.Parallel()
		dir := gitProject(t)
		editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
		code, out, _ := hookStop(t, dir, false)
		require.Equal(t, 0, code)
		require.Equal(t, claudeStopOutput{}, out, "the gate passes the example task")
		before := snapshot(t, dir)
		for _, active := range []bool{false, true} {
			code, out, _ := hookStop(t, dir, active)
			assert.Equal(t, 0, code)
			assert.Equal(t, claudeStopOutput{}, out)
		}
		assert.Equal(t, before, snapshot(t, dir), "a re-check writes nothing")
	})
}

// TestAllLeavesNoTaskOut: geas gate --all lists every entry of the tasks directory with an
// outcome (SPEC §7.2): a failing task hand-set to verified is re-checked and
// fails, a symlinked task directory, a deleted contract, a file and a bad name are errors, a
// hand-set cancelled is not taken on trust, a drafted task is not_ready; only a cancelled task
// that geas task transition cancelled is left out of the count, and the mission fails.
func TestAllLeavesNoTaskOut(t *testing.T) {
	t.Parallel()
	dir := writeMission(t, 2) // t000 passes, t001 fails (artifact_only)
	tasks := filepath.Join(dir, ".geas", "missions", "m1", "tasks")
	cp := func(from, to string, edit func(string, string) string) {
		require.NoError(t, filepath.WalkDir(filepath.Join(tasks, from), func(p string, d os.DirEntry, err error) error {
			require.NoError(t, err)
			rel, _ := filepath.Rel(filepath.Join(tasks, from), p)
			target := filepath.Join(tasks, to, rel)
			if d.IsDir() {
				return os.MkdirAll(target, 0o755)
			}
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			s := strings.ReplaceAll(string(b), `"task_id": "`+from+`"`, `"task_id": "`+to+`"`)
			if edit != nil {
				s = edit(rel, s)
			}
			return os.WriteFile(target, []byte(s), 0o644)
		}))
	}
	status := func(to string) func(string, string) string {
		return func(rel, s string) string {
			if rel == "contract.json" {
				return strings.Replace(s, `"status": "reviewed"`, `"status": "`+to+`"`, 1)
			}
			return s
		}
	}
	cp("t001", "t002", status("verified"))  // failing, hand-set verified
	cp("t001", "t003", status("passed"))    // failing, hand-set passed
	cp("t001", "t004", status("cancelled")) // failing, hand-set cancelled
	cp("t001", "t005", status("drafted"))   // not yet gateable
	cp("t001", "t006", nil)                 // contract deleted after a recorded run (below)
	cp("t001", "t007", nil)                 // cancelled by geas task transition
	require.NoError(t, os.Symlink("t000", filepath.Join(tasks, "t008")))
	require.NoError(t, os.WriteFile(filepath.Join(tasks, "t009"), []byte("{}"), 0o644))
	cp("t001", "t-10.x", nil) // a name that is not a task id
	require.NoError(t, os.WriteFile(filepath.Join(tasks, ".DS_Store"), nil, 0o644))

	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Run(t.Context(), []string{"-C", dir, "task", "transition", "--id", "t007", "--to", "cancelled"}, nil, &stdout, &stderr), stderr.String())
	code, _ := gateAll(t, dir, "--jobs", "2")
	require.Equal(t, 3, code)
	require.NoError(t, os.Remove(filepath.Join(tasks, "t006", "contract.json")))

	for _, dry := range []bool{true, false} {
		args := []string{"--jobs", "2"}
		if dry {
			args = append(args, "--dry-run")
		}
		code, out := gateAll(t, dir, args...)
		got := map[string]string{}
		var names []string
		for _, at := range out.Tasks {
			got[at.TaskID] = at.Outcome
			names = append(names, at.TaskID)
		}
		assert.Equal(t, []string{"t-10.x", "t000", "t001", "t002", "t003", "t004", "t005", "t006", "t007", "t008", "t009"}, names, "every entry, in name order")
		assert.Equal(t, map[string]string{
			"t000": "pass", "t001": "fail", "t002": "error", "t003": "error", "t004": "error", "t005": "not_ready",
			"t006": "error", "t007": "cancelled", "t008": "error", "t009": "error", "t-10.x": "error",
		}, got)
		for _, at := range out.Tasks {
			switch at.TaskID {
			case "t002", "t003":
				require.NotNil(t, at.Result)
				assert.True(t, at.Recheck, "%s is re-checked", at.TaskID)
				assert.Equal(t, vocab.CauseStateUnverified, at.Causes[0].Code)
			case "t004", "t006", "t008", "t009", "t-10.x":
				require.NotNil(t, at.Result, at.TaskID)
				assert.Equal(t, vocab.CauseTaskUnreadable, at.Causes[0].Code, at.TaskID)
				assert.NotEmpty(t, at.Reason)
			}
		}
		assert.Equal(t, []string{".DS_Store"}, out.Ignored)
		assert.False(t, out.Overall.Success)
		assert.Equal(t, 10, out.Overall.Counted, "everything but the one cancelled task counts")
		assert.Equal(t, 1, out.Overall.Counts["cancelled"])
		assert.Equal(t, 3, code)
		assert.Equal(t, 3, out.Overall.ExitCode)
	}

	// Even --min-pass-rate counts every task that is not cancelled: 1 of 10 passes.
	code, out := gateAll(t, dir, "--dry-run", "--min-pass-rate", "0.5")
	assert.Equal(t, 3, code)
	assert.InDelta(t, 0.1, out.Overall.PassRate, 1e-9)
}

// TestMCPEvaluateRechecksAFinishedTask: geas_gate_evaluate on a verified task is the re-check of
// geas gate, not a state_ineligible error; it still writes nothing.
func TestMCPEvaluateRechecksAFinishedTask(t *testing.T) {
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	code, res := gateTask(t, dir)
	require.Equal(t, 0, code, "the example task passes: %v", res["causes"])
	before := snapshot(t, dir)
	cs := mcpSession(t, dir)

	var got struct {
		Verdict string `json:"verdict"`
		Recheck bool   `json:"recheck"`
		Causes  []struct {
			Code string `json:"code"`
		} `json:"causes"`
	}
	out := mcpCall(t, cs, mcpToolEvaluate, map[string]any{"task": "t1"}, &got)
	assert.Equal(t, "pass", got.Verdict)
	assert.True(t, got.Recheck)
	assert.Contains(t, mcpText(out), "recheck of a verified task: the pass still holds")

	assert.Equal(t, before, snapshot(t, dir), "a re-check that holds changes nothing under .geas")
	// The tester withdraws AC1: fresh evidence takes the pass back.
	withdrawQA(t, dir)
	before = snapshot(t, dir)
	out = mcpCall(t, cs, mcpToolEvaluate, map[string]any{"task": "t1"}, &got)
	assert.Equal(t, "fail", got.Verdict)
	assert.True(t, got.Recheck)
	require.NotEmpty(t, got.Causes)
	for _, c := range got.Causes {
		assert.NotEqual(t, "state_ineligible", c.Code)
	}
	assert.Contains(t, mcpText(out), "geas gate verify --apply")
	assert.Equal(t, before, snapshot(t, dir), "nothing under .geas changed")
}
