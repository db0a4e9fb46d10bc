package report

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// TestReportsPlaceFilesInTheRepositoryForASubdirectoryProject (SPEC §5.3 Part B): the checks'
// locations are relative to the project root; code scanning (SARIF) and GitHub's annotations
// place a file by its path in the repository, so a project in svc/ reports svc/a.go, a file
// outside it (../other/b.txt) the repository's other/b.txt, and a check without a location the
// project's own contract. A project at the repository's top reports its paths as they are.
func TestReportsPlaceFilesInTheRepositoryForASubdirectoryProject(t *testing.T) {
	t.Parallel()
	checks := []tiers.Check{
		{Name: "scope", Tier: 2, Status: tiers.StatusFail, Code: vocab.CauseScopeViolation,
			Locations: []tiers.Location{{Path: "a.go"}, {Path: "../other/b.txt"}}},
		{Name: "state_eligible", Tier: 0, Status: tiers.StatusBlock, Code: vocab.CauseStateIneligible},
	}
	for _, tt := range []struct {
		project string
		want    []string
	}{
		{"svc", []string{"svc/a.go", "other/b.txt", "svc/.geas/missions/m1/tasks/t1/contract.json"}},
		{"svc/api", []string{"svc/api/a.go", "svc/other/b.txt", "svc/api/.geas/missions/m1/tasks/t1/contract.json"}},
		{"", []string{"a.go", "../other/b.txt", ".geas/missions/m1/tasks/t1/contract.json"}},
	} {
		res := &tiers.Result{MissionID: "m1", TaskID: "t1", Verdict: vocab.VerdictFail, ProjectPath: tt.project, Checks: checks}
		var out bytes.Buffer
		require.NoError(t, writeSARIF(&out, []*tiers.Result{res}))
		var uris []string
		for _, r := range decodeSARIF(t, out.Bytes()).Runs[0].Results {
			uris = append(uris, r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
		}
		assert.Equal(t, tt.want, uris, "sarif, project %q", tt.project)

		out.Reset()
		require.NoError(t, writeGitHub(&out, []*tiers.Result{res}))
		for _, f := range tt.want[:2] {
			assert.Contains(t, out.String(), ",file="+f+"::", "github, project %q", tt.project)
		}
	}
}
