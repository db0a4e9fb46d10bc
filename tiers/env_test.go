package tiers

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/internal/proc"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// recordingStarter is an Env.Start that runs nothing: it records each spec and answers with the
// exit code exits gives the command (0 when it names none).
type recordingStarter struct {
	mu    sync.Mutex
	specs []proc.Spec
	exits map[string]int
}

func (s *recordingStarter) start(_ context.Context, spec proc.Spec) proc.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs = append(s.specs, spec)
	code := s.exits[spec.Shell]
	status := proc.StatusPass
	if code != spec.ExpectExit {
		status = proc.StatusFail
	}
	return proc.Result{Command: spec.Label, Status: status, ExitCode: &code, DurationMS: 7, OutputTail: "from the env\n"}
}

// TestARunStartsProcessesOnlyThroughItsEnv: every process of a run (here the eval commands) is
// started by Env.Start, and the verdict follows what that runner answers, not what the commands
// would do if run: a command that cannot succeed passes when the env says it exited 0, and the
// same run fails when the env says it exited 1. The signing key is withheld from every spec.
func TestARunStartsProcessesOnlyThroughItsEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		exit   int
		passes bool
	}{
		{"the env says the command passed", 0, true},
		{"the env says the command failed", 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			const cmd = "exit 3" // never run: it would fail whatever the env says
			f.contract(func(m map[string]any) { m["eval_commands"] = []any{cmd} })
			in := f.gather()
			s := &recordingStarter{exits: map[string]int{cmd: tc.exit}}
			env := Env{Start: s.start}
			res, err := Evaluate(t.Context(), in, env, Options{RunID: NextRunID(in.Record), DryRun: true, Now: testNow})
			require.NoError(t, err)
			require.Len(t, s.specs, 1, "the one eval command, started through the env")
			assert.Equal(t, cmd, s.specs[0].Shell)
			assert.Equal(t, []string{record.SigningKeyEnv, record.SigningKeyFileEnv}, s.specs[0].Withhold)
			require.Len(t, res.EvalRuns, 1)
			assert.Equal(t, "from the env\n", res.EvalRuns[0].OutputTail)
			if tc.passes {
				assert.True(t, res.Verdict.IsPass(), "%+v", res.Causes)
			} else {
				assertNotPass(t, res, vocab.VerdictFail, vocab.CauseEvalFailed)
			}
		})
	}
}

// TestARunReadsGitAndTheClockThroughItsEnv: the run's git view is the repository Env.Repo opens
// (a repository that cannot be opened is the run's no_repository error, as a project without one
// is), and its timestamps come from Env.Now.
func TestARunReadsGitAndTheClockThroughItsEnv(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	clock := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
	opened := 0
	env := Env{
		Repo: func(in *Snapshot) (*git.Repo, error) {
			opened++
			in.Release() // the repository the gather opened is not the env's
			return git.Open(in.ProjectDir)
		},
		Now: func() time.Time { return clock },
	}
	in := f.gather()
	res, err := Evaluate(t.Context(), in, env, Options{RunID: NextRunID(in.Record), DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, 1, opened, "the run opened its repository through the env")
	assert.True(t, res.Verdict.IsPass(), "%+v", res.Causes)
	assert.Equal(t, record.Timestamp(clock), res.StartedAt)
	assert.Equal(t, record.Timestamp(clock), res.FinishedAt)
	assert.Zero(t, res.DurationMS)

	// A view that cannot be opened: no_repository, never a pass.
	env.Repo = func(in *Snapshot) (*git.Repo, error) { in.Release(); return nil, git.ErrNoRepository }
	in = f.gather()
	res, err = Evaluate(t.Context(), in, env, Options{RunID: NextRunID(in.Record), DryRun: true})
	require.NoError(t, err)
	assertNotPass(t, res, vocab.VerdictError, vocab.CauseNoRepository)
}
