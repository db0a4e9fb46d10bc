package tiers

import (
	"context"
	"time"

	"github.com/geas-dev/geas/internal/git"
	"github.com/geas-dev/geas/internal/proc"
)

// Env is what a run may use from outside its inputs: the process runner that starts every process
// of the run (the eval commands, the script detectors, the held-out and base runs, the eval_user
// probe), the git view of the project, and the clock. DefaultEnv is the gate's; a test or a caller
// that judges a snapshot elsewhere passes its own to Evaluate, which fills what it leaves nil.
type Env struct {
	// Start runs one process to its end (internal/proc.Run).
	Start func(ctx context.Context, spec proc.Spec) proc.Result
	// Repo opens the project's repository for the run, which closes it: every git check reads
	// through it. The default takes the repository the read of the inputs opened, or opens it.
	Repo func(in *Snapshot) (*git.Repo, error)
	// Now is the clock of the run's timestamps and durations.
	Now func() time.Time
}

// DefaultEnv is the environment of a gate run: processes through internal/proc, the repository
// through internal/git, the wall clock.
func DefaultEnv() Env {
	return Env{Start: proc.Run, Repo: (*Snapshot).takeRepo, Now: time.Now}
}

// withDefaults fills what env leaves unset from DefaultEnv.
func (env Env) withDefaults() Env {
	def := DefaultEnv()
	if env.Start == nil {
		env.Start = def.Start
	}
	if env.Repo == nil {
		env.Repo = def.Repo
	}
	if env.Now == nil {
		env.Now = def.Now
	}
	return env
}
