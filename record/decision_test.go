package record

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/schemas"
)

// decision returns a decision record that the decision schema accepts, with overrides applied
// (a nil value deletes the key).
func decision(t *testing.T, overrides map[string]any) []byte {
	t.Helper()
	d := map[string]any{
		"version":           "1.0",
		"artifact_type":     "decision_record",
		"artifact_id":       "dec-t1-escalation",
		"producer_type":     "geas-gate",
		"title":             "Retry budget spent on t1",
		"decision_type":     "escalation",
		"status":            "pending",
		"created_at":        "2025-06-01T12:30:00Z",
		"mission_id":        "m1",
		"task_id":           "t1",
		"escalation_policy": "design-authority-review",
		"failures":          []any{map[string]any{"run_id": "gate-3", "causes": []any{map[string]any{"code": "scope_violation"}}}},
		"budget_history":    []any{map[string]any{"run_id": "gate-3", "retry_budget_before": 1, "retry_budget_after": 0}},
	}
	for k, v := range overrides {
		if v == nil {
			delete(d, k)
		} else {
			d[k] = v
		}
	}
	b, err := json.MarshalIndent(d, "", "  ")
	require.NoError(t, err)
	return b
}

func TestWriteDecision(t *testing.T) {
	tests := []struct {
		name      string
		overrides map[string]any
		want      string
	}{
		{"pending goes to pending/", nil, "missions/m1/decisions/pending/dec-t1-escalation.json"},
		{"decided goes to decisions/", map[string]any{"status": "decided", "decision": "split the task", "artifact_id": "dec-2"}, "missions/m1/decisions/dec-2.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := openRoot(t)
			data := decision(t, tc.overrides)
			require.NoError(t, schemas.Validate(schemas.Decision, "fixture", data), "the fixture must be a valid decision")

			name, err := WriteDecision(root, "m1", data)

			require.NoError(t, err)
			assert.Equal(t, tc.want, name)
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
			require.NoError(t, err)
			assert.Equal(t, data, got)
			assert.Empty(t, tempFiles(t, dir))
		})
	}
}

func TestWriteDecisionNeverOverwrites(t *testing.T) {
	root, dir := openRoot(t)
	first := decision(t, map[string]any{"title": "first"})
	name, err := WriteDecision(root, "m1", first)
	require.NoError(t, err)

	_, err = WriteDecision(root, "m1", decision(t, map[string]any{"title": "second"}))

	require.ErrorIs(t, err, fs.ErrExist)
	got, err := root.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, first, got)
	assert.Empty(t, tempFiles(t, dir))

	t.Run("concurrent writers: exactly one wins", func(t *testing.T) {
		root, _ := openRoot(t)
		const n = 20
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				_, err := WriteDecision(root, "m1", decision(t, nil))
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		wins := 0
		for err := range errs {
			if err == nil {
				wins++
			} else {
				assert.ErrorIs(t, err, fs.ErrExist)
			}
		}
		assert.Equal(t, 1, wins)
	})
}

func TestWriteDecisionRefusals(t *testing.T) {
	tests := []struct {
		name      string
		mission   string
		overrides map[string]any
		raw       string
	}{
		{name: "mission with a slash", mission: "m1/../m2"},
		{name: "mission dot-dot", mission: ".."},
		{name: "empty mission", mission: ""},
		{name: "mission with a space", mission: "m 1"},
		{name: "not JSON", mission: "m1", raw: `{"artifact_id":`},
		{name: "artifact id escaping", mission: "m1", overrides: map[string]any{"artifact_id": "../../x"}},
		{name: "artifact id missing", mission: "m1", overrides: map[string]any{"artifact_id": nil}},
		{name: "artifact id not a string", mission: "m1", overrides: map[string]any{"artifact_id": 7}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root, dir := openRoot(t)
			data := []byte(tc.raw)
			if tc.raw == "" {
				data = decision(t, tc.overrides)
			}
			_, err := WriteDecision(root, tc.mission, data)
			assert.Error(t, err)
			assert.Empty(t, dirContents(t, dir), "nothing was written")
		})
	}
	t.Run("schema", func(t *testing.T) {
		requireRealSchema(t, schemas.Decision, `{"artifact_id":"x","status":"pending"}`)
		root, dir := openRoot(t)
		_, err := WriteDecision(root, "m1", decision(t, map[string]any{"status": "maybe"}))
		var ve *schemas.ValidationError
		assert.ErrorAs(t, err, &ve)
		assert.Empty(t, dirContents(t, dir))
	})
}
