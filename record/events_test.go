package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/schemas"
)

// readEvents returns the lines of the event log, each checked to be one JSON object.
func readEvents(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	require.True(t, len(data) == 0 || data[len(data)-1] == '\n', "the log ends with a newline")
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "line %d: %s", len(out)+1, sc.Text())
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

func TestAppendEvent(t *testing.T) {
	root, _ := openRoot(t)
	first := Event{
		EventType: "gate_result", MissionID: "m1", TaskID: "t1", Agent: "geas-gate",
		Data: json.RawMessage("{\n  \"run_id\": \"gate-1\",\n  \"verdict\": \"pass\",\n  \"note\": \"<a & b>\"\n}"),
	}
	require.NoError(t, AppendEvent(root, first))
	second := Event{Timestamp: "2025-06-01T12:30:00Z", EventType: "task_transition", TaskID: "t1", Data: json.RawMessage(`{"from":"integrated","to":"verified"}`)}
	require.NoError(t, AppendEvent(root, second))

	data, err := root.ReadFile(EventsFile)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 2)
	assert.Contains(t, lines[0], `"data":{"run_id":"gate-1","verdict":"pass","note":"<a & b>"}`, "data is compacted onto the line, unescaped")
	assert.Regexp(t, `^\{"timestamp":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ","event_type":"gate_result","mission_id":"m1","task_id":"t1","agent":"geas-gate",`, lines[0])
	assert.Equal(t, `{"timestamp":"2025-06-01T12:30:00Z","event_type":"task_transition","task_id":"t1","data":{"from":"integrated","to":"verified"}}`, lines[1])
	for i, l := range lines {
		assert.NoError(t, schemas.Validate(schemas.Event, fmt.Sprintf("line %d", i+1), []byte(l)))
	}
}

func TestAppendEventRefusals(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
	}{
		{"data is not JSON", Event{EventType: "gate_result", Data: json.RawMessage(`{"a":`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, _ := openRoot(t)
			assert.Error(t, AppendEvent(root, tc.ev))
			_, err := root.Stat(EventsFile)
			assert.Error(t, err, "nothing was written")
		})
	}
	schemaChecked := []struct {
		name string
		ev   Event
	}{
		{"no event type", Event{TaskID: "t1"}},
		{"bad timestamp", Event{Timestamp: "yesterday", EventType: "gate_result"}},
		{"task id with a slash", Event{EventType: "gate_result", TaskID: "../t1"}},
		{"data is not an object", Event{EventType: "gate_result", Data: json.RawMessage(`[1]`)}},
	}
	for _, tc := range schemaChecked {
		t.Run(tc.name, func(t *testing.T) {
			requireRealSchema(t, schemas.Event, `{"timestamp":"2025-06-01T00:00:00Z"}`)
			root, _ := openRoot(t)
			var ve *schemas.ValidationError
			assert.ErrorAs(t, AppendEvent(root, tc.ev), &ve)
			_, err := root.Stat(EventsFile)
			assert.Error(t, err, "nothing was written")
		})
	}
}

func TestAppendEventLinesNeverInterleave(t *testing.T) {
	root, _ := openRoot(t)
	const n = 200
	// A payload bigger than a pipe buffer and a page, so a torn write would show.
	pad := strings.Repeat("x", 16<<10)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			data, _ := json.Marshal(map[string]any{"i": i, "pad": pad})
			errs <- AppendEvent(root, Event{EventType: "gate_result", TaskID: "t1", Data: data})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	data, err := root.ReadFile(EventsFile)
	require.NoError(t, err)
	events := readEvents(t, data)
	require.Len(t, events, n)
	seen := map[int]bool{}
	for _, e := range events {
		d := e["data"].(map[string]any)
		assert.Equal(t, pad, d["pad"])
		seen[int(d["i"].(float64))] = true
	}
	assert.Len(t, seen, n, "every goroutine's event is there exactly once")
}
