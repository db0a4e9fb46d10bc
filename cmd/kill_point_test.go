package cmd

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
)

// durState is what a command leaves that must not be lost (SPEC §2.6, §7.3), without what
// differs between two runs of the same work (timestamps, hashes, durations).
type durState struct {
	Status     string
	History    []string
	GateResult string
	Events     []string
	Decisions  []string
	Pinned     string // rules_sha256 of contract.pinned.json, when it is there
}

// readDurState reads the task's state from its files, as a user would after the fact.
func readDurState(t *testing.T, dir string) durState {
	t.Helper()
	var st durState
	b, err := os.ReadFile(filepath.Join(dir, taskDir, "contract.json"))
	require.NoError(t, err)
	var k struct {
		Status string `json:"status"`
	}
	require.NoError(t, json.Unmarshal(b, &k))
	st.Status = k.Status

	rec, err := record.LoadPath(filepath.Join(dir, taskDir, "record.json"))
	require.NoError(t, err, "the record must load after any kill")
	require.NoError(t, record.VerifyChain(rec.History()), "the chain must verify after any kill")
	for _, e := range rec.History() {
		st.History = append(st.History, fmt.Sprintf("%s %s %s %s->%s", e.Kind, e.RunID, e.Verdict, budgetStr(e.RetryBudgetBefore), budgetStr(e.RetryBudgetAfter)))
	}
	if raw, ok := rec.GateResult(); ok {
		var gr struct {
			RunID      string `json:"run_id"`
			Verdict    string `json:"verdict"`
			After      *int   `json:"retry_budget_after"`
			NextAction string `json:"next_action"`
			Hash       string `json:"hash"`
			Transition *struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"transition"`
		}
		require.NoError(t, json.Unmarshal(raw, &gr))
		st.GateResult = fmt.Sprintf("%s %s after=%s next=%s", gr.RunID, gr.Verdict, budgetStr(gr.After), gr.NextAction)
		if gr.Transition != nil {
			st.GateResult += " " + gr.Transition.From + "->" + gr.Transition.To
		}
		if last, _, ok := record.LastRun(rec); ok {
			assert.Equal(t, last.Hash, gr.Hash, "gate_result is the latest run's")
		}
	}

	if f, err := os.Open(filepath.Join(dir, ".geas", "state", "events.jsonl")); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var ev struct {
				Type string `json:"event_type"`
				Task string `json:"task_id"`
				Data struct {
					RunID   string `json:"run_id"`
					From    string `json:"from"`
					To      string `json:"to"`
					Verdict string `json:"verdict"`
					Retries int    `json:"retries"`
				} `json:"data"`
			}
			require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "events.jsonl line %q", sc.Text())
			d := ev.Data
			st.Events = append(st.Events, strings.TrimSpace(fmt.Sprintf("%s %s %s %s %s retries=%d", ev.Type, ev.Task, d.RunID, d.Verdict, d.From+"->"+d.To, d.Retries)))
		}
		require.NoError(t, sc.Err())
		f.Close()
	}
	if b, err := os.ReadFile(filepath.Join(dir, taskDir, "contract.pinned.json")); err == nil {
		var pin struct {
			RulesSHA256 string `json:"rules_sha256"`
		}
		require.NoError(t, json.Unmarshal(b, &pin), "contract.pinned.json must parse after any kill")
		st.Pinned = pin.RulesSHA256
	}
	entries, _ := os.ReadDir(filepath.Join(dir, ".geas", "missions", "m1", "decisions", "pending"))
	for _, e := range entries {
		st.Decisions = append(st.Decisions, e.Name())
	}
	return st
}

func budgetStr(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}

// runGeas runs geas in dir with extra environment and returns its exit code, or -1 when it was
// killed by a signal.
func runGeas(t *testing.T, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("geas", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, string(out)
		}
		return ee.ExitCode(), string(out)
	}
	require.NoError(t, err)
	return 0, ""
}

// durScenario is one command whose every write step is killed in turn.
type durScenario struct {
	name  string
	setup func(t *testing.T, dir string) // brings a fresh example project to the state before the command
	args  []string
	code  int // its exit code when nothing kills it
}

// The command run after each kill (and after the uninterrupted run): it takes the task's lock,
// so it completes whatever the killed command left undone, and changes nothing the state shows.
var durFollowUp = []string{"task", "integrate", "--task", "t1", "--commit", "HEAD"}

func durScenarios() []durScenario {
	lastRetry := func(t *testing.T, dir string) {
		editContract(t, dir, func(c map[string]any) {
			c["retry_budget"] = 1
			c["eval_commands"] = []any{"exit 1"}
		})
	}
	passing := func(t *testing.T, dir string) {
		editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	}
	return []durScenario{
		{"gate: a fail that spends the last retry and escalates", lastRetry, []string{"gate", "--task", "t1"}, 1},
		{"gate: a pass", passing, []string{"gate", "--task", "t1"}, 0},
		{"gate verify --apply: a revocation", func(t *testing.T, dir string) {
			passing(t, dir)
			code, out := runGeas(t, dir, nil, "gate", "--task", "t1")
			require.Equal(t, 0, code, out)
			require.NoError(t, os.Remove(filepath.Join(dir, taskDir, "evidence", "qa-engineer.json")))
		}, []string{"gate", "verify", "--apply", "--task", "t1"}, 1},
		{"task budget grant: after an escalation", func(t *testing.T, dir string) {
			lastRetry(t, dir)
			code, out := runGeas(t, dir, nil, "gate", "--task", "t1")
			require.Equal(t, 1, code, out)
		}, []string{"task", "budget", "grant", "--task", "t1", "--retries", "2", "--by", "orchestration-authority", "--reason", "test: one more try"}, 0},
		{"task approve: new rules pinned after a run pinned the old", func(t *testing.T, dir string) {
			lastRetry(t, dir)
			code, out := runGeas(t, dir, nil, "gate", "--task", "t1")
			require.Equal(t, 1, code, out)
			editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"exit 1", "true"} })
		}, []string{"task", "approve", "--task", "t1", "--by", "orchestration-authority", "--reason", "test: new rules"}, 0},
	}
}

// durRuns is what the durability tests compare against, for scenario sc: a fresh copy of its
// project for each trial, the state after the follow-up command without sc's command and after an
// uninterrupted run of it, and the lines of that run's write-steps log.
func durRuns(t *testing.T, sc durScenario) (fresh func() string, noRun, withRun durState, steps []string) {
	t.Helper()
	base := gitProject(t)
	sc.setup(t, base)
	fresh = func() string {
		d := t.TempDir()
		require.NoError(t, copyTree(base, d))
		return d
	}
	// Without the command, and uninterrupted, each followed by the same command.
	without := fresh()
	code, out := runGeas(t, without, nil, durFollowUp...)
	require.Equal(t, 0, code, out)
	noRun = readDurState(t, without)

	whole := fresh()
	log := filepath.Join(t.TempDir(), "steps")
	code, out = runGeas(t, whole, []string{envStepsLog + "=" + log}, sc.args...)
	require.Equal(t, sc.code, code, out)
	code, out = runGeas(t, whole, nil, durFollowUp...)
	require.Equal(t, 0, code, out)
	withRun = readDurState(t, whole)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	return fresh, noRun, withRun, strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestNothingIsLostAtAnyKillPoint (SPEC §2.6, §7.3): the gate (a fail that spends the
// last retry and escalates, and a pass), gate verify --apply, task budget grant and task approve are SIGKILLed
// at every durable write step in turn (a test hook of this binary, before the write). After one
// more command on the task, the state — contract status, history, gate_result, events, pending
// decisions — is exactly an uninterrupted run's when the kill came after the commit point (the
// history append), and exactly the state without the run when it came before.
func TestNothingIsLostAtAnyKillPoint(t *testing.T) {
	for _, sc := range durScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			fresh, noRun, withRun, names := durRuns(t, sc)
			require.NotEqual(t, noRun, withRun, "the command changes the state")
			commit := slices.IndexFunc(names, func(s string) bool { return strings.Contains(s, record.HistoryFile) })
			require.GreaterOrEqual(t, commit, 0, "the command appends to the history: %q", names)
			t.Logf("%d write steps: %s", len(names), strings.Join(names, "; "))

			for n := 1; n <= len(names); n++ {
				dir := fresh()
				code, out := runGeas(t, dir, []string{envKillAt + "=" + strconv.Itoa(n)}, sc.args...)
				require.Equal(t, -1, code, "kill at step %d (%s) must land: %s", n, names[n-1], out)
				code, out = runGeas(t, dir, nil, durFollowUp...)
				require.Equal(t, 0, code, "the next command after a kill at step %d: %s", n, out)
				got := readDurState(t, dir)
				if n-1 <= commit {
					// Killed at or before the append: the command did not happen.
					assert.Equal(t, noRun, got, "kill before step %d (%s), before the commit point: the state without the run", n, names[n-1])
				} else {
					assert.Equal(t, withRun, got, "kill before step %d (%s), after the commit point: the uninterrupted run's state", n, names[n-1])
				}
				// Completing twice changes nothing.
				code, out = runGeas(t, dir, nil, durFollowUp...)
				require.Equal(t, 0, code, out)
				assert.Equal(t, got, readDurState(t, dir), "a second command after the kill at step %d adds nothing", n)
			}
		})
	}
}
