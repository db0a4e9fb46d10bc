package record

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/fsutil"
)

// TestLoadFromAnswersAsLoad: a record read through its task directory's handle is what Load
// reads through .geas, errors (their text) included, whatever the task's files are: missing,
// links that leave the directory but stay in .geas, links that leave .geas, not files, invalid.
func TestLoadFromAnswersAsLoad(t *testing.T) {
	const task = "missions/m1/tasks/t1"
	rec := `{"version": "1.0", "task_id": "t1", "created_at": "2025-06-01T12:30:00Z"}` + "\n"
	other := New("t2", testNow)
	other.history = []HistoryEntry{{Kind: KindHistoryReset, RunID: "r1", Hash: "h1"}}
	hist, err := historyLines(other.history)
	require.NoError(t, err)
	cases := map[string]func(t *testing.T, geas string){
		"record only": func(t *testing.T, geas string) { write(t, geas, task+"/record.json", rec) },
		"record, history and integration": func(t *testing.T, geas string) {
			write(t, geas, task+"/record.json", rec)
			write(t, geas, task+"/"+HistoryFile, string(hist))
			write(t, geas, task+"/"+IntegrationFile, `{"status": "merged", "commit": "abc"}`)
		},
		"no record, a history": func(t *testing.T, geas string) { write(t, geas, task+"/"+HistoryFile, string(hist)) },
		"no record, nothing":   func(t *testing.T, geas string) { write(t, geas, task+"/contract.json", "{}") },
		"no task directory":    func(t *testing.T, geas string) {},
		"history linked sideways inside .geas": func(t *testing.T, geas string) {
			write(t, geas, task+"/record.json", rec)
			write(t, geas, "shared/"+HistoryFile, string(hist))
			link(t, "../../../../shared/"+HistoryFile, filepath.Join(geas, task, HistoryFile))
		},
		"record linked out of .geas": func(t *testing.T, geas string) {
			write(t, geas, "../outside.json", rec)
			write(t, geas, task+"/contract.json", "{}")
			link(t, "../../../../../outside.json", filepath.Join(geas, task, "record.json"))
		},
		"task directory linked sideways": func(t *testing.T, geas string) {
			write(t, geas, "missions/m1/tasks/real/record.json", rec)
			link(t, "real", filepath.Join(geas, task))
		},
		"integration is a directory": func(t *testing.T, geas string) {
			write(t, geas, task+"/record.json", rec)
			require.NoError(t, os.MkdirAll(filepath.Join(geas, task, IntegrationFile), 0o755))
		},
		"history invalid": func(t *testing.T, geas string) {
			write(t, geas, task+"/record.json", rec)
			write(t, geas, task+"/"+HistoryFile, "{\"verdict\": \"PASS\"}\n")
		},
		"record invalid": func(t *testing.T, geas string) { write(t, geas, task+"/record.json", `{"version": 1}`) },
	}
	// The cases Load refuses (so that the comparison of errors is made at all).
	refused := map[string]bool{"no record, nothing": true, "no task directory": true, "record linked out of .geas": true,
		"integration is a directory": true, "history invalid": true, "record invalid": true}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			root, geas := openRoot(t)
			setup(t, geas)
			want, wantErr := Load(root, task+"/record.json")
			require.Equal(t, refused[name], wantErr != nil, "Load: %v", wantErr)
			dir := fsutil.OpenSubdir(root, task)
			defer dir.Close()
			got, gotErr := LoadFrom(dir, task+"/record.json")
			if wantErr != nil {
				require.Error(t, gotErr)
				require.Equal(t, wantErr.Error(), gotErr.Error())
				require.Nil(t, got)
				return
			}
			require.NoError(t, gotErr)
			wb, err := want.Bytes()
			require.NoError(t, err)
			gb, err := got.Bytes()
			require.NoError(t, err)
			require.Equal(t, string(wb), string(gb))
			require.Equal(t, want.History(), got.History())
			require.Equal(t, want.store, got.store)
			wi, _ := want.IntegrationJSON()
			gi, _ := got.IntegrationJSON()
			require.Equal(t, string(wi), string(gi))
		})
	}
}

func write(t *testing.T, geas, name, data string) {
	t.Helper()
	p := filepath.Join(geas, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
}

func link(t *testing.T, target, at string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(at), 0o755))
	if err := os.Symlink(target, at); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
}
