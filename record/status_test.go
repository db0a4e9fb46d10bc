package record

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/vocab"
)

func TestSetContractStatus(t *testing.T) {
	contract := `{
  "version": "1.0",
  "task_id": "t1",
  "big": 12345678901234567890123,
  "float": 1.50,
  "escaped": "a\u0041<&>",
  "status": "integrated",
  "nested": {"b": 1,   "a": [1, 2.0, "x"]},
  "updated_at": "2025-01-01T00:00:00Z",
  "title": "last"
}`
	got, err := SetContractStatus([]byte(contract), vocab.Verified, testNow)
	require.NoError(t, err)

	want := `{
  "version": "1.0",
  "task_id": "t1",
  "big": 12345678901234567890123,
  "float": 1.50,
  "escaped": "a\u0041<&>",
  "status": "verified",
  "nested": {
    "b": 1,
    "a": [
      1,
      2.0,
      "x"
    ]
  },
  "updated_at": "2025-06-01T12:30:00Z",
  "title": "last"
}
`
	assert.Equal(t, want, string(got))

	t.Run("appends missing keys", func(t *testing.T) {
		got, err := SetContractStatus([]byte(`{"task_id":"t1"}`), vocab.Ready, testNow)
		require.NoError(t, err)
		assert.Equal(t, "{\n  \"task_id\": \"t1\",\n  \"status\": \"ready\",\n  \"updated_at\": \"2025-06-01T12:30:00Z\"\n}\n", string(got))
	})
	refusals := []struct {
		name     string
		contract string
		to       vocab.State
	}{
		{"unknown state", `{"status":"ready"}`, "done"},
		{"not an object", `["status"]`, vocab.Ready},
		{"malformed", `{"status":`, vocab.Ready},
		{"trailing data", `{"status":"ready"} {}`, vocab.Ready},
		{"duplicate key", `{"status":"ready","status":"passed"}`, vocab.Ready},
		{"empty", ``, vocab.Ready},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			_, err := SetContractStatus([]byte(tc.contract), tc.to, testNow)
			assert.Error(t, err)
		})
	}
}
