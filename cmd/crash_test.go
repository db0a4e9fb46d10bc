package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
)

// crashIterations is the number of kills of TestCrashNeverTearsARecord. The default keeps
// `go test ./...` short; bench/crash.sh runs 200 (also settable with GEAS_CRASH_ITERATIONS).
var crashIterations = flag.Int("crash.iterations", 0, "kills in TestCrashNeverTearsARecord (default 15, or $GEAS_CRASH_ITERATIONS)")

// crashBudget is large enough that no run of the crash test ever escalates the task.
const crashBudget = 100000

// TestCrashNeverTearsARecord (SPEC §2.6, §7.3): geas gate on a failing task is SIGKILLed at a
// random moment, again and again. After every kill record.json parses, its history chain
// verifies, gate_result is the chain's latest run, no lock is held, the budget is the contract's
// budget minus the fail entries, and every events.jsonl line is whole JSON.
func TestCrashNeverTearsARecord(t *testing.T) {
	n := *crashIterations
	if n == 0 {
		if v, err := strconv.Atoi(os.Getenv("GEAS_CRASH_ITERATIONS")); err == nil && v > 0 {
			n = v
		} else {
			n = 15
		}
	}
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) {
		c["retry_budget"] = crashBudget
		c["eval_commands"] = []any{"exit 1"}
	})
	proj, err := os.OpenRoot(filepath.Join(dir, ".geas"))
	require.NoError(t, err)
	defer proj.Close()
	taskRel := strings.TrimPrefix(taskDir, ".geas/")

	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("GEAS_CRASH_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d (GEAS_CRASH_SEED reproduces the delays)", seed)

	// A run on this machine may take longer than 150 ms, and then no kill would land near the
	// write. Three complete runs measure it; delays are drawn from 0 to the larger of 150 ms and
	// 1.2 times the median run, and every other one from 0.7 to 1.3 times the median, so kills
	// land before, during and after the write.
	var runs []time.Duration
	for c := range 3 {
		newAttempt(t, dir, -1-c) // each run a new attempt: an unchanged one is repeated (SPEC §7.1)
		start := time.Now()
		err := exec.Command("geas", "-C", dir, "gate", "--task", "t1", "--quiet").Run()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee) && ee.ExitCode() == 1, "calibration run: %v", err)
		runs = append(runs, time.Since(start))
	}
	slices.Sort(runs)
	window := max(150*time.Millisecond, runs[1]*6/5)
	t.Logf("median complete run %v: kill delays drawn from 0..%v", runs[1].Round(time.Millisecond), window.Round(time.Millisecond))
	entries := len(checkCrashState(t, proj, taskRel, dir, -1).History())

	var completed, killedAfterWrite, killedBeforeWrite, killedMidWrite, pending int
	temps := 0
	for i := range n {
		delay := time.Duration(rng.Int64N(int64(window) + 1))
		if i%2 == 1 {
			// Every other kill aims at the end of a run, where the record is written.
			delay = runs[1]*7/10 + time.Duration(rng.Int64N(int64(runs[1]*6/10)+1))
		}
		newAttempt(t, dir, i)
		cmd := exec.Command("geas", "-C", dir, "gate", "--task", "t1", "--quiet")
		require.NoError(t, cmd.Start())
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "iteration %d: geas exited 0 on a failing task", i)
		killed := false
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed = true
		} else {
			require.Equal(t, 1, ee.ExitCode(), "iteration %d: a run that finished must fail", i)
		}

		rec := checkCrashState(t, proj, taskRel, dir, i)
		if rec.ResultPending() {
			pending++ // killed between the history append and the record write: the next run completes it
		}
		grew := len(rec.History()) - entries
		require.True(t, grew == 0 || grew == 1, "iteration %d: history grew by %d", i, grew)
		if !killed {
			require.Equal(t, 1, grew, "iteration %d: a finished run is in the history", i)
		}
		entries = len(rec.History())
		// A SIGKILL between creating a temporary file and renaming it leaves the temporary file:
		// proof that the kill landed in the middle of an atomic write, which must not matter.
		left, err := filepath.Glob(filepath.Join(dir, taskDir, ".*.tmp-*"))
		require.NoError(t, err)
		if len(left) > temps {
			killedMidWrite++
		}
		temps = len(left)
		switch {
		case !killed:
			completed++
		case grew == 1:
			killedAfterWrite++
		default:
			killedBeforeWrite++
		}
	}
	t.Logf("crash test: %d iterations: %d killed before the history append (the run did not happen), %d killed after it (the run happened), %d finished before the kill; %d kills landed inside an atomic write (temporary file left); %d left record.json behind the history, completed by the next run; %d history entries, every state consistent",
		n, killedBeforeWrite, killedAfterWrite, completed, killedMidWrite, pending, entries)
}

// checkCrashState asserts the invariants that must hold after any kill and returns the record.
func checkCrashState(t *testing.T, geas *os.Root, taskRel, dir string, i int) *record.Record {
	t.Helper()
	name := taskRel + "/record.json"
	b, err := geas.ReadFile(name)
	require.NoError(t, err, "iteration %d", i)
	_ = b
	rec, err := record.Load(geas, name)
	require.NoError(t, err, "iteration %d: record.json does not parse", i)
	hist := rec.History()
	require.NoError(t, record.VerifyChain(hist), "iteration %d", i)

	fails := 0
	for _, e := range hist {
		if e.Verdict == "fail" {
			fails++
		}
	}
	require.Equal(t, crashBudget-fails, record.BudgetLeft(crashBudget, rec),
		"iteration %d: budget is the contract's minus the %d fail entries", i, fails)

	if len(hist) > 0 {
		raw, ok := rec.GateResult()
		require.True(t, ok, "iteration %d: history without gate_result", i)
		var gr struct {
			RunID string `json:"run_id"`
			Hash  string `json:"hash"`
		}
		require.NoError(t, json.Unmarshal(raw, &gr))
		last := hist[len(hist)-1]
		require.Equal(t, last.Hash, gr.Hash, "iteration %d: gate_result is not the chain's latest run", i)
		require.Equal(t, last.RunID, gr.RunID, "iteration %d", i)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	lock, err := record.LockTask(ctx, geas, taskRel)
	require.NoError(t, err, "iteration %d: the lock is still held after the kill", i)
	require.NoError(t, lock.Unlock())

	if f, err := os.Open(filepath.Join(dir, ".geas", "state", "events.jsonl")); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for line := 1; sc.Scan(); line++ {
			require.True(t, json.Valid(sc.Bytes()), "iteration %d: events.jsonl line %d is torn: %q", i, line, sc.Text())
		}
		require.NoError(t, sc.Err())
	}
	return rec
}
