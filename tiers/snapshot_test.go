package tiers

import (
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTheSnapshotIsConfirmedByItsBytes (SPEC §7.4): the re-check of a run's inputs compares the
// bytes read again with what the first read digested. Inputs left alone confirm by bytes alone;
// every kind of change to an input is seen and named; a rewrite of record.json that touches only
// the gate's own sections changes its bytes, not the inputs; a file the gate does not read as
// evidence (not *.json, or hidden) changes nothing.
func TestTheSnapshotIsConfirmedByItsBytes(t *testing.T) {
	const debt = ".geas/missions/m1/evolution/debt-register.json"
	t.Run("inputs left alone are confirmed by their bytes", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.write(".geas/gate-policy.json", `{"eval_timeout": "5m"}`)
		in := f.gather()
		defer in.Release()
		require.NotEmpty(t, in.Evidence)
		assert.True(t, in.sameBytes(), "nothing changed: the bytes alone confirm the snapshot")
		assert.Empty(t, in.changedInputs())
	})

	changes := []struct {
		name   string
		change func(f *fixture)
		file   string
	}{
		{"evidence rewritten", func(f *fixture) { appendTo(t, f.path(taskFile("evidence/qa-engineer.json")), " ") }, taskFile("evidence/qa-engineer.json")},
		{"evidence added", func(f *fixture) {
			f.write(taskFile("evidence/qa-engineer-2.json"), string(f.read(taskFile("evidence/qa-engineer.json"))))
		}, taskFile("evidence/qa-engineer-2.json")},
		{"evidence removed", func(f *fixture) { f.remove(taskFile("evidence/design-authority.json")) }, taskFile("evidence/design-authority.json")},
		{"the contract rewritten", func(f *fixture) { appendTo(t, f.path(taskFile("contract.json")), " ") }, taskFile("contract.json")},
		{"a record section rewritten", func(f *fixture) {
			f.record(func(m map[string]any) { m["self_check"].(map[string]any)["summary"] = "All done" })
		}, taskFile("record.json")},
		{"integration.json rewritten", func(f *fixture) {
			f.record(func(m map[string]any) { m["integration"].(map[string]any)["branch"] = "other" })
		}, taskFile("record.json")},
		{"the debt register rewritten", func(f *fixture) { appendTo(t, f.path(debt), " ") }, debt},
		{"the debt register removed", func(f *fixture) { f.remove(debt) }, debt},
		{"a policy written", func(f *fixture) { f.write(".geas/gate-policy.json", `{"shared_globs": ["*"]}`) }, ".geas/gate-policy.json"},
	}
	for _, tc := range changes {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			in := f.gather()
			defer in.Release()
			tc.change(f)
			assert.False(t, in.sameBytes())
			assert.Equal(t, []string{tc.file}, in.changedInputs())
		})
	}

	t.Run("the gate's own sections rewritten are not a change", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		in := f.gather()
		defer in.Release()
		f.record(func(m map[string]any) { m["gate_result"] = map[string]any{"verdict": "pass"} })
		assert.False(t, in.sameBytes(), "record.json's bytes changed")
		assert.Empty(t, in.changedInputs(), "but none of its agent-written sections")
	})

	t.Run("files that are not evidence are not inputs", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		in := f.gather()
		defer in.Release()
		f.write(taskFile("evidence/notes.txt"), "notes")
		f.write(taskFile("evidence/.draft.json"), "{")
		assert.True(t, in.sameBytes())
		assert.Empty(t, in.changedInputs())
	})
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, errors.Join(err, f.Close()))
}
