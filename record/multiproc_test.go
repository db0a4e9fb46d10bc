package record

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
)

// The child mode of TestRecordWritesAcrossProcesses: the test binary re-executed with these
// variables set runs one locked read-modify-write and exits.
const (
	childDirEnv = "GEAS_RECORD_TEST_CHILD_DIR"
	childIDEnv  = "GEAS_RECORD_TEST_CHILD_ID"
	childTask   = "missions/m1/tasks/t1"
)

// childSelfCheck is the self_check child id writes: the known_risks it read, plus its own, so the
// final record shows whether any child's read-modify-write was lost.
func childSelfCheck(id int, seen []string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"confidence":     1 + id%5,
		"known_risks":    append(slices.Clone(seen), fmt.Sprintf("child-%d", id)),
		"untested_paths": []string{},
		"summary":        fmt.Sprintf("child-%d", id),
	})
	return b
}

// TestRecordChildProcess is not a test on its own: it is the body of each child process.
func TestRecordChildProcess(t *testing.T) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		t.Skip("run by TestRecordWritesAcrossProcesses only")
	}
	id, err := strconv.Atoi(os.Getenv(childIDEnv))
	require.NoError(t, err)
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()

	lock, err := LockTask(t.Context(), root, childTask)
	require.NoError(t, err)
	r, err := Load(root, childTask+"/record.json")
	require.NoError(t, err)
	var seen []string
	if sc, ok := r.SelfCheck(); ok {
		seen = sc.KnownRisks
	}
	require.NoError(t, r.SetSection("self_check", childSelfCheck(id, seen), testNow))
	b, err := r.Bytes()
	require.NoError(t, err)
	require.NoError(t, fsutil.WriteFileAtomic(root, childTask+"/record.json", b, 0o644))
	require.NoError(t, lock.Unlock())

	data, _ := json.Marshal(map[string]int{"child": id})
	require.NoError(t, AppendEvent(root, Event{EventType: "test_child", MissionID: "m1", TaskID: "t1", Data: data}))
}

func TestRecordWritesAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 20 processes")
	}
	root, dir := openRoot(t)
	r := New("t1", testNow)
	b, err := r.Bytes()
	require.NoError(t, err)
	require.NoError(t, fsutil.WriteFileAtomic(root, childTask+"/record.json", b, 0o644))

	const n = 20
	var wg sync.WaitGroup
	outputs := make([][]byte, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestRecordChildProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childIDEnv+"="+strconv.Itoa(i))
			outputs[i], errs[i] = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i], "child %d:\n%s", i, outputs[i])
	}

	final, err := Load(root, childTask+"/record.json")
	require.NoError(t, err, "record.json parses after 20 concurrent writers")
	sc, ok := final.SelfCheck()
	require.True(t, ok)
	var last int
	_, err = fmt.Sscanf(sc.Summary, "child-%d", &last)
	require.NoError(t, err)
	raw, _ := final.Section("self_check")
	seen := sc.KnownRisks[:len(sc.KnownRisks)-1]
	assert.JSONEq(t, string(childSelfCheck(last, seen)), string(raw), "the section is exactly what child %d wrote", last)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("child-%d", i))
	}
	assert.ElementsMatch(t, want, sc.KnownRisks, "no child's read-modify-write was lost")

	events, err := root.ReadFile(EventsFile)
	require.NoError(t, err)
	lines := readEvents(t, events)
	assert.Len(t, lines, n)
	assert.Empty(t, tempFiles(t, dir))
}
