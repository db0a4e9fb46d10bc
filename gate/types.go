package gate

import (
	"context"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
)

// The names below are what the commands need from the packages under gate: the commands import
// gate (and report), never those packages, so each reaches them here.

// Result is one run's outcome (tiers.Result).
type Result = tiers.Result

// Cause is one reason of a verdict (tiers.Cause).
type Cause = tiers.Cause

// Progress reports a run's eval commands as they run (tiers.Progress).
type Progress = tiers.Progress

// EvalRun is one eval command as it ran (tiers.EvalRun).
type EvalRun = tiers.EvalRun

// Status is one check's outcome (tiers.Status).
type Status = tiers.Status

// Check statuses (tiers).
const (
	StatusPass    = tiers.StatusPass
	StatusFail    = tiers.StatusFail
	StatusBlock   = tiers.StatusBlock
	StatusError   = tiers.StatusError
	StatusWarn    = tiers.StatusWarn
	StatusSkipped = tiers.StatusSkipped
)

// Next actions of a result (SPEC §7.2), as tiers names them; NextRevoke is a recheck's.
const (
	NextProceed        = tiers.NextProceed
	NextFix            = tiers.NextFix
	NextEscalate       = tiers.NextEscalate
	NextResolveBlock   = tiers.NextResolveBlock
	NextInvestigateErr = tiers.NextInvestigateErr
)

// ErrInterrupted is a run cut short by its context: eval commands killed, nothing written.
var ErrInterrupted = tiers.ErrInterrupted

// BudgetText prints a retry budget that may be unknown (nil).
func BudgetText(p *int) string { return record.BudgetText(p) }

// PinnedFile is the pinned copy of a task's rules, beside its contract (SPEC §4.4).
const PinnedFile = tiers.PinnedFile

// MaxPayloadBytes bounds a payload a command writes for an agent (the gate's evidence limit).
const MaxPayloadBytes = evidence.DefaultMaxBytes

// MaxGrant is the most retries one grant or reset gives.
const MaxGrant = record.MaxGrant

// IntegrationStatuses are the values integration.json's status may take.
var IntegrationStatuses = record.IntegrationStatuses

// AgentTypes are the agent types of geas v1.0.
var AgentTypes = evidence.GeasAgentTypes

// SigningKeyEnv names the environment variable of the signing key.
const SigningKeyEnv = record.SigningKeyEnv

// LoadSigningKey reads the signing key once, at start; its error is every keyed command's refusal.
func LoadSigningKey() error { return record.LoadSigningKey() }

// SigningKeyErr is why the signing key cannot be read (nil: it can, or none is set).
func SigningKeyErr() error { return record.SigningKeyErr() }

// SigningKeySet reports whether a signing key is set, from the environment or a key file.
func SigningKeySet() bool {
	src, _ := record.SigningKeySource()
	return src != record.KeyNone
}

// TaskLock is a task's exclusive lock, as Lock takes it.
type TaskLock = fsutil.Lock

// LockTimeoutError is a lock wait that gave up (SPEC §7.3): an error of the run.
type LockTimeoutError = fsutil.LockTimeoutError

// LockWait is how a command waits for a task lock another run holds.
type LockWait = fsutil.LockWait

// DefaultLockTimeout is how long a task lock is waited for unless told otherwise.
const DefaultLockTimeout = fsutil.DefaultLockTimeout

// WithLockWait returns ctx carrying w, which every task lock taken under it follows.
func WithLockWait(ctx context.Context, w LockWait) context.Context {
	return fsutil.WithLockWait(ctx, w)
}
