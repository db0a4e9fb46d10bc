//go:build unix

package project

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSingleMissionIsTheDefault (SPEC §9): with no mission named by run.json, the only mission
// under .geas/missions/ is the default; anything that makes "the only one" doubtful is no default,
// and the refusal names what .geas/missions/ holds.
func TestSingleMissionIsTheDefault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		run     string // run.json ("" = none)
		setup   func(t *testing.T, missions string)
		want    string // "" = ErrNoMission
		wantMsg string
	}{
		{name: "one mission, no run.json", want: "m1"},
		{name: "run.json without mission_id", run: `{"version":"1.0","status":"initialized"}`, want: "m1"},
		{name: "run.json with null mission_id", run: `{"mission_id":null}`, want: "m1"},
		{name: "run.json with empty mission_id", run: `{"mission_id":""}`, want: "m1"},
		{name: "run.json names another mission", run: `{"mission_id":"other"}`, want: "other"},
		{name: "a hidden file beside it", setup: func(t *testing.T, m string) {
			require.NoError(t, os.WriteFile(filepath.Join(m, ".DS_Store"), nil, 0o644))
		}, want: "m1"},
		{name: "two missions", setup: func(t *testing.T, m string) {
			require.NoError(t, os.Mkdir(filepath.Join(m, "m2"), 0o755))
		}, wantMsg: "holds 2 missions: m1, m2"},
		{name: "a symlink beside it", setup: func(t *testing.T, m string) {
			require.NoError(t, os.Symlink("m1", filepath.Join(m, "m2")))
		}, wantMsg: `not mission directories: "m2"`},
		{name: "a bad name beside it", setup: func(t *testing.T, m string) {
			require.NoError(t, os.Mkdir(filepath.Join(m, "m 2"), 0o755))
		}, wantMsg: `"m 2"`},
		{name: "a file beside it", setup: func(t *testing.T, m string) {
			require.NoError(t, os.WriteFile(filepath.Join(m, "M1"), nil, 0o644))
		}, wantMsg: `"M1"`},
		{name: "no mission", setup: func(t *testing.T, m string) {
			require.NoError(t, os.RemoveAll(filepath.Join(m, "m1")))
		}, wantMsg: "holds no mission"},
		{name: "no missions directory", setup: func(t *testing.T, m string) {
			require.NoError(t, os.RemoveAll(m))
		}, wantMsg: "holds no mission"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mkProject(t, dir)
			run := filepath.Join(dir, ".geas", "state", "run.json")
			require.NoError(t, os.Remove(run))
			if tc.run != "" {
				require.NoError(t, os.WriteFile(run, []byte(tc.run), 0o644))
			}
			if tc.setup != nil {
				tc.setup(t, filepath.Join(dir, ".geas", "missions"))
			}
			p, err := Open(dir)
			require.NoError(t, err)
			defer p.Close()
			m, err := p.Mission("")
			if tc.want != "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, m)
				return
			}
			require.ErrorIs(t, err, ErrNoMission)
			assert.Contains(t, err.Error(), tc.wantMsg)
			assert.Empty(t, m)
		})
	}
}

// TestRunJSONIsNeverGuessedPast: a run.json that cannot be read or names a bad id is an error even
// with one mission to fall back to.
func TestRunJSONIsNeverGuessedPast(t *testing.T) {
	for _, run := range []string{`{"mission_id":"../x"}`, `{"mission_id":7}`, `{"Mission_ID":"m1"}`, `not json`, `{"mission_id":"m1","mission_id":"m2"}`} {
		t.Run(run, func(t *testing.T) {
			dir := t.TempDir()
			mkProject(t, dir)
			require.NoError(t, os.WriteFile(filepath.Join(dir, ".geas", "state", "run.json"), []byte(run), 0o644))
			p, err := Open(dir)
			require.NoError(t, err)
			defer p.Close()
			m, err := p.DefaultMission()
			require.Error(t, err)
			assert.NotErrorIs(t, err, ErrNoMission)
			assert.Empty(t, m)
		})
	}
}

func TestMissionsListsMissionDirectoriesOnly(t *testing.T) {
	dir := t.TempDir()
	mkProject(t, dir)
	m := filepath.Join(dir, ".geas", "missions")
	require.NoError(t, os.Mkdir(filepath.Join(m, "b2"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(m, "a b"), 0o755))
	require.NoError(t, os.Symlink("/", filepath.Join(m, "root")))
	require.NoError(t, os.WriteFile(filepath.Join(m, "file"), nil, 0o644))
	p, err := Open(dir)
	require.NoError(t, err)
	defer p.Close()
	ids, err := p.Missions()
	require.NoError(t, err)
	assert.Equal(t, []string{"b2", "m1"}, ids)
}
