package tiers

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/vocab"
)

// tier1Project makes a project directory with a sub directory, a file and a symlink leading out of
// the project, and a tier1Input over it that keeps logs.
func tier1Project(t *testing.T, cmds ...contract.EvalCommand) tier1Input {
	t.Helper()
	dir := t.TempDir()
	project := filepath.Join(dir, "project")
	require.NoError(t, os.MkdirAll(filepath.Join(project, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(project, "file"), []byte("x"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "outside"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "outside"), filepath.Join(project, "out")))
	require.NoError(t, os.Symlink("sub", filepath.Join(project, "insub")))
	root, err := os.OpenRoot(project)
	require.NoError(t, err)
	t.Cleanup(func() { root.Close() })
	logDir := tier1LogDir(project)
	require.NoError(t, os.MkdirAll(logDir, 0o755))
	logRoot, err := os.OpenRoot(logDir)
	require.NoError(t, err)
	t.Cleanup(func() { logRoot.Close() })
	return tier1Input{
		Commands:       cmds,
		DefaultTimeout: 30 * time.Second,
		ProjectDir:     project,
		Root:           root,
		LogRoot:        logRoot,
		LogDirName:     ".geas/missions/m1/tasks/t1/gate-logs/gate-3",
	}
}

// tier1LogDir is the log directory of tier1Project's run.
func tier1LogDir(project string) string {
	return filepath.Join(project, ".geas", "missions", "m1", "tasks", "t1", "gate-logs", "gate-3")
}

func TestTier1NoCommandsIsSkipped(t *testing.T) {
	checks, runs, metrics := tier1(t.Context(), tier1Project(t))
	require.Len(t, checks, 1)
	assert.Equal(t, Check{Name: "eval_commands", Tier: 1, Text: "run the contract's eval commands",
		Status: StatusSkipped, Evidence: "no eval_commands configured"}, checks[0])
	assert.Empty(t, runs)
	assert.Empty(t, metrics)
}

func TestTier1AllPass(t *testing.T) {
	in := tier1Project(t,
		contract.EvalCommand{Run: `echo "coverage: 50%"; echo "tests: 12"`, Metrics: map[string]string{
			"coverage": `coverage: ([0-9.]+)%`, "tests": `tests: (\d+)`}},
		contract.EvalCommand{Run: `test "$MODE" = ci && exit 3`, Env: map[string]string{"MODE": "ci"}, ExpectExit: 3},
		contract.EvalCommand{Run: `pwd -P; echo "coverage: 81.5%"`, Workdir: "sub", Metrics: map[string]string{
			"coverage": `coverage: ([0-9.]+)%`}},
		contract.EvalCommand{Run: `pwd -P`, Workdir: "insub/"},
	)
	checks, runs, metrics := tier1(t.Context(), in)
	require.Len(t, checks, 4)
	require.Len(t, runs, 4)
	for i, c := range checks {
		assert.Equal(t, StatusPass, c.Status, "check %d: %s", i+1, c.Evidence)
		assert.True(t, c.Passed)
		assert.True(t, c.Blocking)
		assert.Equal(t, 1, c.Tier)
		assert.Regexp(t, `^exit \d+ in \d+(ms|\.\ds)$`, c.Evidence)
	}
	assert.Equal(t, "eval_command_2", checks[1].Name)
	assert.Equal(t, "eval command 2: `test \"$MODE\" = ci && exit 3` exits 3", checks[1].Text)
	assert.True(t, strings.HasPrefix(checks[1].Evidence, "exit 3 in "), checks[1].Evidence)

	sub, err := filepath.EvalSymlinks(filepath.Join(in.ProjectDir, "sub"))
	require.NoError(t, err)
	assert.Equal(t, sub+"\ncoverage: 81.5%\n", runs[2].OutputTail, "workdir is used")
	assert.Equal(t, sub+"\n", runs[3].OutputTail, "a symlink inside the project is followed")
	assert.Equal(t, map[string]float64{"coverage": 81.5, "tests": 12}, metrics, "later commands override earlier ones")

	for i, r := range runs {
		n := i + 1
		assert.Equal(t, in.Commands[i].Run, r.Command)
		assert.Equal(t, ".geas/missions/m1/tasks/t1/gate-logs/gate-3/"+strconv.Itoa(n)+".log", r.Log)
		log, err := os.ReadFile(filepath.Join(tier1LogDir(in.ProjectDir), strconv.Itoa(n)+".log"))
		require.NoError(t, err)
		assert.Equal(t, r.OutputTail, string(log))
	}
}

// TestAFailingEvalCommandQuotesWhatFailed: the evidence of a failing eval command quotes the
// lines in which the test runner says what failed, read from the whole output (here far past the
// kept tail, and in a dry run that keeps no log), not the runner's last lines; output in which no
// runner says what failed keeps the last lines.
func TestAFailingEvalCommandQuotesWhatFailed(t *testing.T) {
	gotest := `printf -- '--- FAIL: TestDepth (0.00s)\n    depth_test.go:6: Depth(1) = 1, want 2\nFAIL\nFAIL\texample.com/depth\t0.004s\n'; ` +
		`i=0; while [ $i -lt 400 ]; do echo "ok  	example.com/depth/sub$i	0.021s"; i=$((i+1)); done; echo FAIL; exit 1`
	for _, dry := range []bool{false, true} {
		in := tier1Project(t, contract.EvalCommand{Run: gotest})
		in.TailBytes = 1024
		if dry {
			in.LogRoot, in.LogDirName = nil, ""
		}
		checks, runs, _ := tier1(t.Context(), in)
		require.Len(t, runs, 1)
		assert.NotContains(t, runs[0].OutputTail, "--- FAIL", "the failure is outside the kept tail")
		assert.Equal(t, vocab.CauseEvalFailed, checks[0].Code)
		assert.Regexp(t, `^must exit 0 — exited 1 in \d+(ms|\.\ds); failure lines: --- FAIL: TestDepth \(0\.00s\) \| depth_test\.go:6: Depth\(1\) = 1, want 2(; full log: \S+)?$`,
			checks[0].Evidence)
		assert.NotContains(t, checks[0].Evidence, "last output")
	}

	// Control: output in which no runner says what failed is quoted by its last lines.
	in := tier1Project(t, contract.EvalCommand{Run: `echo "--- FAIL in a sentence"; echo boom; exit 1`})
	checks, _, _ := tier1(t.Context(), in)
	assert.Regexp(t, `^must exit 0 — exited 1 in \S+; last output: --- FAIL in a sentence \| boom; full log: `, checks[0].Evidence)
}

func TestTier1StopsAtFirstFailure(t *testing.T) {
	in := tier1Project(t,
		contract.EvalCommand{Run: `echo building`},
		contract.EvalCommand{Run: `echo one; echo two >&2; printf '\n\n'; echo "three\tfour"; echo FAIL: TestX; exit 2`},
		contract.EvalCommand{Run: `echo never > ran`},
		contract.EvalCommand{Run: `true`},
	)
	checks, runs, _ := tier1(t.Context(), in)
	require.Len(t, checks, 4)
	require.Len(t, runs, 2, "commands after the failure are not run")

	assert.Equal(t, StatusPass, checks[0].Status)
	failed := checks[1]
	assert.Equal(t, StatusFail, failed.Status)
	assert.False(t, failed.Passed)
	assert.True(t, failed.Blocking)
	assert.Equal(t, vocab.CauseEvalFailed, failed.Code)
	assert.Regexp(t, `^must exit 0 — exited 2 in \d+(ms|\.\ds); last output: two \| three four \| FAIL: TestX; `+
		`full log: \.geas/missions/m1/tasks/t1/gate-logs/gate-3/2\.log$`, failed.Evidence)
	require.NotNil(t, runs[1].ExitCode)
	assert.Equal(t, 2, *runs[1].ExitCode)
	assert.Equal(t, StatusFail, runs[1].Status)

	for _, c := range checks[2:] {
		assert.Equal(t, StatusSkipped, c.Status)
		assert.False(t, c.Blocking)
		assert.Equal(t, "not run: eval command 2 failed", c.Evidence)
	}
	assert.Equal(t, "eval_command_3", checks[2].Name)
	assert.Equal(t, "eval command 3: `echo never > ran` exits 0", checks[2].Text)
	assert.NoFileExists(t, filepath.Join(in.ProjectDir, "ran"))
	assert.NoFileExists(t, filepath.Join(tier1LogDir(in.ProjectDir), "3.log"))
}

func TestTier1Failures(t *testing.T) {
	tests := []struct {
		name     string
		cmd      contract.EvalCommand
		claimed  []string
		dryRun   bool
		status   Status
		code     vocab.CauseCode
		evidence string // regexp
	}{
		{
			name:     "wrong exit without output",
			cmd:      contract.EvalCommand{Run: `exit 1`},
			status:   StatusFail,
			code:     vocab.CauseEvalFailed,
			evidence: `^must exit 0 — exited 1 in \d+(ms|\.\ds); no output; full log: \S+/1\.log$`,
		},
		{
			name:     "zero exit when another is expected",
			cmd:      contract.EvalCommand{Run: `echo ok`, ExpectExit: 1},
			status:   StatusFail,
			code:     vocab.CauseEvalFailed,
			evidence: `^must exit 1 — exited 0 in \d+(ms|\.\ds); last output: ok; full log: `,
		},
		{
			name:     "the fresh run is the truth",
			cmd:      contract.EvalCommand{Run: `echo "--- FAIL: TestParse"; exit 1`},
			claimed:  []string{"qa-engineer.json"},
			status:   StatusFail,
			code:     vocab.CauseEvalFailed,
			evidence: `; full log: \S+; qa-engineer\.json claims pass, the fresh run failed$`,
		},
		{
			name:     "several claims",
			cmd:      contract.EvalCommand{Run: `exit 1`},
			claimed:  []string{"qa-engineer.json", "qa-engineer-2.json"},
			dryRun:   true,
			status:   StatusFail,
			code:     vocab.CauseEvalFailed,
			evidence: `^must exit 0 — exited 1 in \d+(ms|\.\ds); no output; qa-engineer\.json, qa-engineer-2\.json claim pass, the fresh run failed$`,
		},
		{
			name:     "timeout",
			cmd:      contract.EvalCommand{Run: `echo waiting; sleep 300`, Timeout: "300ms"},
			status:   StatusFail,
			code:     vocab.CauseEvalTimeout,
			evidence: `^timed out after 300ms; process group killed; last output: waiting; full log: \S+/1\.log$`,
		},
		{
			name:     "killed by a signal",
			cmd:      contract.EvalCommand{Run: `kill -KILL $$`},
			dryRun:   true,
			status:   StatusFail,
			code:     vocab.CauseEvalFailed,
			evidence: `^killed by signal: killed after \d+(ms|\.\ds); no output$`,
		},
		{
			name:     "workdir symlink out of the project",
			cmd:      contract.EvalCommand{Run: `touch escaped`, Workdir: "out"},
			status:   StatusError,
			code:     vocab.CauseEvalUnstartable,
			evidence: `^cannot start: workdir out: path escapes from parent$`,
		},
		{
			name:     "missing workdir",
			cmd:      contract.EvalCommand{Run: `true`, Workdir: "missing/dir"},
			claimed:  []string{"qa-engineer.json"},
			status:   StatusError,
			code:     vocab.CauseEvalUnstartable,
			evidence: `^cannot start: workdir missing/dir: no such file or directory; qa-engineer\.json claims pass, the fresh run could not start$`,
		},
		{
			name:     "workdir that is a file",
			cmd:      contract.EvalCommand{Run: `true`, Workdir: "file"},
			status:   StatusError,
			code:     vocab.CauseEvalUnstartable,
			evidence: `^cannot start: workdir file: not a directory$`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tier1Project(t, tc.cmd, contract.EvalCommand{Run: `true`})
			in.ClaimedPass = tc.claimed
			if tc.dryRun {
				in.LogRoot, in.LogDirName = nil, ""
				require.NoError(t, os.RemoveAll(filepath.Join(in.ProjectDir, ".geas")))
			}
			checks, runs, _ := tier1(t.Context(), in)
			require.Len(t, checks, 2)
			c := checks[0]
			assert.Equal(t, tc.status, c.Status)
			assert.Equal(t, tc.code, c.Code)
			assert.True(t, c.Blocking)
			assert.False(t, c.Passed)
			assert.Regexp(t, tc.evidence, c.Evidence)
			assert.Equal(t, StatusSkipped, checks[1].Status)
			assert.Contains(t, checks[1].Evidence, "not run: eval command 1 ")
			require.Len(t, runs, 1)
			assert.Equal(t, tc.status, runs[0].Status)
			if tc.dryRun {
				assert.Empty(t, runs[0].Log)
				assert.NoDirExists(t, filepath.Join(in.ProjectDir, ".geas"))
			}
			assert.NoFileExists(t, filepath.Join(filepath.Dir(in.ProjectDir), "outside", "escaped"))
		})
	}
}

func TestTier1Interrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	in := tier1Project(t, contract.EvalCommand{Run: `touch ran`}, contract.EvalCommand{Run: `true`})
	checks, _, _ := tier1(ctx, in)
	require.Len(t, checks, 2)
	assert.Equal(t, StatusError, checks[0].Status)
	assert.Equal(t, vocab.CauseInterrupted, checks[0].Code)
	assert.Equal(t, StatusSkipped, checks[1].Status)
	assert.Equal(t, "not run: interrupted", checks[1].Evidence)
	assert.NoFileExists(t, filepath.Join(in.ProjectDir, "ran"))
}

func TestTier1Duration(t *testing.T) {
	tests := []struct {
		ms   int64
		want string
	}{
		{0, "0ms"},
		{350, "350ms"},
		{1234, "1.2s"},
		{59_940, "59.9s"},
		{125_400, "2m5s"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, tier1Duration(tc.ms))
		})
	}
}

func TestTier1LastOutput(t *testing.T) {
	tests := []struct {
		name, tail, want string
	}{
		{"empty", "", ""},
		{"blank lines are skipped", "a\n\n  \nb\r\n\n", "a | b"},
		{"last three lines", "1\n2\n3\n4\n", "2 | 3 | 4"},
		{"spacing collapses", "x\t\ty   z", "x y z"},
		{"long output keeps its end", strings.Repeat("é", 300) + "END", "…" + strings.Repeat("é", 198) + "END"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tier1LastOutput(tc.tail))
		})
	}
}
