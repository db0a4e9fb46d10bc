package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/record"
)

// TestMixedWritersLoseNothing (SPEC §2.6): on one mission, at the same time, geas gate runs on a
// failing task t1, geas task record add and geas evidence add write to t1 and to the verified task
// t2, geas event log appends events, and geas gate verify (once it is built) re-checks t2. Nothing
// is torn (every file parses, every chain verifies, verify never sees tampering) and nothing is
// lost (one history entry per gate run, one event line per event, every evidence file present).
func TestMixedWritersLoseNothing(t *testing.T) {
	const (
		gates     = 8 // gate runs on t1
		records   = 6 // record adds per task
		evidences = 6 // evidence adds per task
		events    = 8 // event log calls
		verifies  = 6 // gate verify calls (when built)
	)
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) {
		c["retry_budget"] = 1000
		c["eval_commands"] = []any{"exit 1"}
	})
	geas := func(args ...string) ([]byte, int) {
		cmd := exec.Command("geas", append([]string{"-C", dir}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			return append(out, stderr.Bytes()...), ee.ExitCode()
		case err != nil:
			return []byte(err.Error()), -1
		}
		return out, 0
	}

	// t2 passes once first, so that gate verify has a verified task to re-evaluate.
	out, code := geas("gate", "--task", "t2", "--quiet")
	require.Equal(t, 0, code, "t2 should pass before the mixed run: %s", out)
	out, code = geas("gate", "verify", "--task", "t2")
	// The stub of gate verify has no flags and answers "not built yet": either way a usage error.
	verifyBuilt := !(code == 64 && (strings.Contains(string(out), "not built") || strings.Contains(string(out), "unknown flag")))
	if verifyBuilt {
		require.Equal(t, 0, code, "gate verify on an untouched pass: %s", out)
	} else {
		t.Log("geas gate verify is not built yet: the mixed run leaves it out")
	}
	linesBefore := len(eventLines(t, dir))
	histBefore := map[string]int{}
	sectionsBefore := map[string][]string{}
	for _, task := range []string{"t1", "t2"} {
		rec := loadTaskRecord(t, dir, task)
		histBefore[task] = len(rec.History())
		sectionsBefore[task] = rec.Sections()
	}

	payload := func(task string, i int) string {
		// confidence 3..5 keeps every rubric threshold as it was, so t2 still passes.
		return fmt.Sprintf(`{"confidence":%d,"summary":"%s writer %d","known_risks":[],"untested_paths":["path/%s/%d"]}`, i%3+3, task, i, task, i)
	}
	type job struct {
		args []string
		want []int // acceptable exit codes
	}
	var jobs []job
	for range gates {
		jobs = append(jobs, job{[]string{"--format", "json", "gate", "--task", "t1", "--quiet"}, []int{1}})
	}
	for _, task := range []string{"t1", "t2"} {
		for i := range records {
			jobs = append(jobs, job{[]string{"task", "record", "add", "--task", task, "--section", "self_check", "--data", payload(task, i)}, []int{0}})
		}
		for i := range evidences {
			data := fmt.Sprintf(`{"summary":"mixed reviewer %d of %s","verdict":"approved","concerns":[]}`, i, task)
			jobs = append(jobs, job{[]string{"evidence", "add", "--task", task, "--agent", fmt.Sprintf("challenger-mixed-%d", i), "--role", "reviewer", "--data", data}, []int{0}})
		}
	}
	for i := range events {
		jobs = append(jobs, job{[]string{"event", "log", "--type", "mixed_writer", "--task", "t1", "--data", fmt.Sprintf(`{"writer":%d}`, i)}, []int{0}})
	}
	if verifyBuilt {
		for range verifies {
			jobs = append(jobs, job{[]string{"gate", "verify", "--task", "t2"}, []int{0}})
		}
		for range verifies / 2 {
			jobs = append(jobs, job{[]string{"gate", "verify", "--all"}, []int{0}})
		}
	}

	// A gate run that is the same attempt as a recorded fail records nothing (SPEC §7.1): the
	// figures below count the runs that judged.
	var repeats atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out, code := geas(j.args...)
			assert.Contains(t, j.want, code, "geas %s: %s", strings.Join(j.args, " "), out)
			if bytes.Contains(out, []byte(`"repeat_of"`)) {
				repeats.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	judged := gates - int(repeats.Load())
	require.Positive(t, judged, "the first gate run judges")

	// Nothing torn: each record parses and its chain verifies; nothing lost: one entry per run.
	for task, runs := range map[string]int{"t1": judged, "t2": 0} {
		rec := loadTaskRecord(t, dir, task)
		hist := rec.History()
		require.NoError(t, record.VerifyChain(hist), task)
		assert.Len(t, hist, histBefore[task]+runs, "%s: one history entry per gate run", task)
		sc, ok := rec.Section("self_check")
		require.True(t, ok, task)
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, sc))
		var want []string
		for i := range records {
			want = append(want, payload(task, i))
		}
		assert.Contains(t, want, compact.String(), "%s: self_check is exactly one writer's payload", task)
		assert.Subset(t, rec.Sections(), sectionsBefore[task], "%s: every section survived", task)

		for i := range evidences {
			name := fmt.Sprintf("challenger-mixed-%d.json", i)
			p := filepath.Join(dir, ".geas/missions/m1/tasks", task, "evidence", name)
			b, err := os.ReadFile(p)
			if !assert.NoError(t, err, "%s: evidence %s lost", task, name) {
				continue
			}
			e, err := evidence.Parse(p, b)
			if assert.NoError(t, err) {
				assert.Equal(t, fmt.Sprintf("mixed reviewer %d of %s", i, task), e.Summary)
			}
		}
		entries, err := os.ReadDir(filepath.Join(dir, ".geas/missions/m1/tasks", task))
		require.NoError(t, err)
		for _, e := range entries {
			assert.NotContains(t, e.Name(), ".tmp", "%s: temp file left behind", task)
		}
	}
	rec := loadTaskRecord(t, dir, "t1")
	assert.Equal(t, 1000-judged, record.BudgetLeft(1000, rec), "every fail spent exactly one retry")

	lines := eventLines(t, dir)
	writers := map[int]bool{}
	gateResults := 0
	for _, l := range lines[linesBefore:] {
		switch l.EventType {
		case "mixed_writer":
			writers[l.Data.Writer] = true
		case "gate_result":
			gateResults++
		}
	}
	assert.Len(t, lines, linesBefore+judged+events, "one event line per gate run and per event log call")
	assert.Equal(t, judged, gateResults)
	assert.Len(t, writers, events)
	if verifyBuilt {
		out, code := geas("gate", "verify", "--all")
		assert.Equal(t, 0, code, "after the mixed run the verified task still verifies: %s", out)
	}
}

func loadTaskRecord(t *testing.T, dir, task string) *record.Record {
	t.Helper()
	p := filepath.Join(dir, ".geas/missions/m1/tasks", task, "record.json")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	_ = b
	rec, err := record.LoadPath(p)
	require.NoError(t, err, "%s record.json is torn", task)
	return rec
}

type eventLine struct {
	EventType string `json:"event_type"`
	Data      struct {
		Writer int `json:"writer"`
	} `json:"data"`
}

// eventLines parses every line of events.jsonl; a torn line fails the test.
func eventLines(t *testing.T, dir string) []eventLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, ".geas", "state", "events.jsonl"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []eventLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l eventLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), "torn event line %q", sc.Text())
		out = append(out, l)
	}
	require.NoError(t, sc.Err())
	return out
}
