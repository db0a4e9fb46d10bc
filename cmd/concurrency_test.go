package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/record"
)

// copyExample copies testdata/example to a temporary project and returns its root.
func copyExample(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	require.NoError(t, copyTree(exampleDir(t), dst))
	return dst
}

// TestNothingIsLostUnderConcurrentWriters (SPEC §2.6): 50 processes at once on one task, each
// logging an event and writing the same record section with its own payload. Afterwards every
// event line is present and valid JSON, record.json is valid, and the section is exactly one of the
// payloads, never a mix.
func TestNothingIsLostUnderConcurrentWriters(t *testing.T) {
	const n = 50
	dir := copyExample(t)
	payloads := make([]string, n)
	for i := range payloads {
		// Each payload differs in every field, so a torn or merged write cannot match any of them.
		payloads[i] = fmt.Sprintf(`{"confidence":%d,"summary":"writer %d","known_risks":["risk of writer %d"],"untested_paths":["path/%d"]}`, i%5+1, i, i, i)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, args := range [][]string{
				{"-C", dir, "event", "log", "--type", "writer_done", "--task", "t1", "--data", fmt.Sprintf(`{"writer":%d}`, i)},
				{"-C", dir, "task", "record", "add", "--task", "t1", "--section", "self_check", "--data", payloads[i]},
			} {
				out, err := exec.Command("geas", args...).CombinedOutput()
				if err != nil {
					errs <- fmt.Errorf("writer %d: geas %s: %v\n%s", i, strings.Join(args[2:5], " "), err, out)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	f, err := os.Open(filepath.Join(dir, ".geas", "state", "events.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	seen := map[int]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev struct {
			EventType string `json:"event_type"`
			Data      struct {
				Writer int `json:"writer"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev), "line %q", sc.Text())
		assert.Equal(t, "writer_done", ev.EventType)
		assert.False(t, seen[ev.Data.Writer], "writer %d logged twice", ev.Data.Writer)
		seen[ev.Data.Writer] = true
	}
	require.NoError(t, sc.Err())
	assert.Len(t, seen, n)

	name := filepath.Join(dir, ".geas", "missions", "m1", "tasks", "t1", "record.json")
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	_ = b
	rec, err := record.LoadPath(name)
	require.NoError(t, err)
	got, ok := rec.Section("self_check")
	require.True(t, ok)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, got))
	assert.Contains(t, payloads, compact.String(), "self_check is exactly one writer's payload")
	// The other sections survived every rewrite.
	_, ok = rec.Integration()
	assert.True(t, ok)
	_, ok = rec.Section("integration")
	assert.False(t, ok, "the integration moved to integration.json on the first write")
	entries, err := os.ReadDir(filepath.Dir(name))
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.Contains(e.Name(), ".tmp"), "temp file left behind: %s", e.Name())
	}
}
