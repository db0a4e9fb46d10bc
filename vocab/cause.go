package vocab

// CauseCode names one reason a gate run did not pass (SPEC §5): the code of a check that holds the
// gate, or warns.
type CauseCode string

// Cause codes (SPEC §5). They are stable: fix loops branch on them.
const (
	CauseContractInvalid     CauseCode = "contract_invalid"
	CauseRecordInvalid       CauseCode = "record_invalid"
	CauseStateIneligible     CauseCode = "state_ineligible"
	CauseMissingSelfCheck    CauseCode = "missing_self_check"
	CauseMissingReview       CauseCode = "missing_review"
	CauseEvidenceInvalid     CauseCode = "evidence_invalid"
	CauseMissingIntegration  CauseCode = "missing_integration"
	CauseBaselineMismatch    CauseCode = "baseline_mismatch"
	CauseNoRepository        CauseCode = "no_repository"
	CauseEvalFailed          CauseCode = "eval_failed"
	CauseEvalTimeout         CauseCode = "eval_timeout"
	CauseEvalUnstartable     CauseCode = "eval_unstartable"
	CauseCriterionFailed     CauseCode = "criterion_failed"
	CauseCriterionUnverified CauseCode = "criterion_unverified"
	CauseDetectorError       CauseCode = "detector_error"
	CauseScopeViolation      CauseCode = "scope_violation"
	CauseRiskUnhandled       CauseCode = "risk_unhandled"
	CauseScoreMissing        CauseCode = "score_missing"
	CauseBelowThreshold      CauseCode = "below_threshold"
	CauseStubCapExceeded     CauseCode = "stub_cap_exceeded"
	CauseJudgeNotIndependent CauseCode = "judge_not_independent"
	CauseNothingToSatisfy    CauseCode = "nothing_to_satisfy"
	CausePolicyInvalid       CauseCode = "policy_invalid"
	CauseInterrupted         CauseCode = "interrupted"

	// The gate history and the budget (SPEC §5.1, §7.1).
	CauseHistoryTampered CauseCode = "history_tampered"
	CauseBudgetSpent     CauseCode = "budget_spent"
)

// Cause codes of re-gating finished tasks, the Stop hook and --all (SPEC §7.2, §9).
const (
	// CauseStateUnverified: a task's state says verified or passed, but the records do not back it.
	CauseStateUnverified CauseCode = "state_unverified"
	// CauseTaskUnreadable: geas gate --all found a task directory entry it cannot read as a task.
	CauseTaskUnreadable CauseCode = "task_unreadable"
	// CauseGateRunFailed: a gate run could not complete (a lock or log directory it cannot create).
	CauseGateRunFailed CauseCode = "gate_run_failed"
)

// Cause codes of reviews and evidence freshness (SPEC §5.1, §5.3 A).
const (
	CauseReviewRejected  CauseCode = "review_rejected"
	CauseReviewBlocked   CauseCode = "review_blocked"
	CauseStaleEvidence   CauseCode = "stale_evidence"
	CauseAmbiguousResult CauseCode = "ambiguous_result"
)

// Cause codes of the pinned bar, scope sources and the inputs snapshot (SPEC §4.4, §5.3 B, §7.4).
const (
	CauseRulesChanged   CauseCode = "rules_changed"
	CauseNoChangeSource CauseCode = "no_change_source"
	CauseInputsChanged  CauseCode = "inputs_changed"
)

// Cause codes of invariant 7, a verdict is about one commit (SPEC §5.1).
const (
	CauseEmptyChange      CauseCode = "empty_change"
	CauseWorktreeMismatch CauseCode = "worktree_mismatch"
	CauseCheckoutFailed   CauseCode = "checkout_failed"
)

// Cause codes of the content judged being the commit's (SPEC §5.1, "The repository is
// agent-writable…").
const (
	// CauseSymlinkEscape: a symbolic link of the head tree leads outside the repository, into
	// .git or into the bookkeeping paths, so the code run through it is not the commit's.
	CauseSymlinkEscape CauseCode = "symlink_escape"
	// CauseSubmoduleUnscanned: a submodule changed in base..head; its content is not in the
	// repository's objects and is not scanned (a warning naming it, never a silent zero).
	CauseSubmoduleUnscanned CauseCode = "submodule_unscanned"
)

// Cause codes of the size bounds (SPEC §2 invariant 9, §7.3, §10).
const (
	// CauseResultTooLarge: the run's result would make record.json larger than the gate reads
	// back; it is recorded in compact form as an error instead.
	CauseResultTooLarge CauseCode = "result_too_large"
	// CauseHistoryFull: the run's history entry would take the gate history past its limit;
	// nothing is appended.
	CauseHistoryFull CauseCode = "history_full"
)

// Cause codes of the signing key's protection from the code a run starts (SPEC §9).
const (
	// CauseKeyExposed: the eval commands or script detectors could read the signing key (from
	// the environment of the processes that started the gate, or from a key file their user can
	// read). An error that refuses the run before anything runs, records nothing and spends no
	// retry; a warning on every run when the policy accepts the exposure (key_exposure: accept).
	CauseKeyExposed CauseCode = "key_exposed"
)

// Cause codes of the tests' results (SPEC §5.2a, invariant 10).
const (
	// CauseTestsMissing: an eval command declares its results, and they cannot be read or say that
	// no test ran (silence is not success).
	CauseTestsMissing CauseCode = "tests_missing"
)

// Cause codes of test integrity: the tests are part of the bar (SPEC §2 invariant 10, §5.2a).
const (
	// CauseTestsModified: a protected check (a test file, a test-runner configuration, what an
	// eval command names) changed in base..head without an authority's approval to change it.
	CauseTestsModified CauseCode = "tests_modified"
	// CauseTestsWeakened: a skip or focus marker added in a test file, or a net drop of
	// assertions in a file the contract lets the work change.
	CauseTestsWeakened CauseCode = "tests_weakened"
	// CauseSuppressionAdded: a linter or type-checker suppression marker added (a warning).
	CauseSuppressionAdded CauseCode = "suppression_added"
	// CauseTestIntegrityOff: the policy turned test integrity off (tests.integrity: off); a
	// warning on every run, so that no run is silent about it.
	CauseTestIntegrityOff CauseCode = "test_integrity_off"
)

// Cause code of the comparison with the base (SPEC §5.2a): nothing that passed at the base is
// lost. A base run that cannot run at all is checkout_failed or eval_unstartable (an error).
const (
	// CauseTestsDropped: a test that passed at the base is missing, skipped or failing at the head
	// (policy tests.compare_base).
	CauseTestsDropped CauseCode = "tests_dropped"
)

// Cause code of the held-out checks (SPEC §5.2a): checks the agents cannot read or write, run on
// the head.
const (
	// CauseHoldoutFailed: a held-out command failed on the head with the held-out files laid over
	// it (a fail), or the held-out checks could not be read or run (an error).
	CauseHoldoutFailed CauseCode = "holdout_failed"
)

// Cause code of a skip the work adds to its own tests (SPEC §5.2a.3).
const (
	// CauseSkipAdded: a skip marker in a test file the work adds that skips only the test it is
	// in (a warning): it lowers no check of the base.
	CauseSkipAdded CauseCode = "skip_added"
)

// Cause codes of the repository the agents can write (SPEC §5.1, "nothing in it is taken on
// trust").
const (
	// CauseRepositoryCorrupt: an object a verdict depends on does not hash to its id (or sha1cd
	// detected a collision attack in it), or a commit-graph names parents its commit object does
	// not; the object's id and what it was read for are named.
	CauseRepositoryCorrupt CauseCode = "repository_corrupt"
)

// Codes of warnings: a check that warns never holds the gate, but its code names what it found.
const (
	// CauseProviderUnknown: an evaluator's, a judge's or an accepting agent's provider is not known,
	// so its independence from the builder is not confirmed.
	CauseProviderUnknown CauseCode = "provider_unknown"
	// CauseStubConfirmed: confirmed stubs within the cap.
	CauseStubConfirmed CauseCode = "stub_confirmed"
	// CauseBaseUnpinned: base_snapshot is not a full commit SHA.
	CauseBaseUnpinned CauseCode = "base_unpinned"
	// CauseScopeShared: changes outside the surfaces touch only shared files.
	CauseScopeShared CauseCode = "scope_shared"
	// CauseUndeclaredChange: a changed file is not declared in the implementer's files_changed.
	CauseUndeclaredChange CauseCode = "undeclared_change"
	// CauseStubUnreadable: a self_check.possible_stubs location the gate cannot read (a
	// directory, a special file, a path out of the project, past the read budget): the builder's
	// claim cannot be checked. A fail, never an error that would stand in for the run's fail.
	CauseStubUnreadable CauseCode = "stub_unreadable"
	// CausePolicyNotInBase: a task with a base has a .geas/gate-policy.json that its base commit
	// does not hold and its head does (the work added it): the built-in defaults judge.
	CausePolicyNotInBase CauseCode = "policy_not_in_base"
)

// Codes of test integrity's measured claims (SPEC §5.2a.7).
const (
	// CauseClaimContradicted: an independent evidence file claims what the gate's own measurement
	// contradicts (a tester's pass while an eval command failed, a criterion passed whose detector
	// failed, a metric the fresh run did not reach); that file's criteria_results and
	// rubric_scores do not count in the run. A warning: the measurement decides the verdict.
	CauseClaimContradicted CauseCode = "claim_contradicted"
)

// A warning of tier 2 part B (SPEC §5.3 B).
const (
	// CauseAttributionRefused: another task of the mission claims a verified pass that the gate
	// cannot confirm (its history does not verify, its pinned rules or its event do not match the
	// pass, or its recorded base is unknown): nothing is attributed to it, and its files stay
	// this task's scope question.
	CauseAttributionRefused CauseCode = "attribution_refused"
)

// Causes returns every cause code, in the order they are declared: the registry a document or a
// test can walk to see that each code is described.
func Causes() []CauseCode {
	return []CauseCode{
		CauseContractInvalid,
		CauseRecordInvalid,
		CauseStateIneligible,
		CauseMissingSelfCheck,
		CauseMissingReview,
		CauseEvidenceInvalid,
		CauseMissingIntegration,
		CauseBaselineMismatch,
		CauseNoRepository,
		CauseEvalFailed,
		CauseEvalTimeout,
		CauseEvalUnstartable,
		CauseCriterionFailed,
		CauseCriterionUnverified,
		CauseDetectorError,
		CauseScopeViolation,
		CauseRiskUnhandled,
		CauseScoreMissing,
		CauseBelowThreshold,
		CauseStubCapExceeded,
		CauseJudgeNotIndependent,
		CauseNothingToSatisfy,
		CausePolicyInvalid,
		CauseInterrupted,
		CauseHistoryTampered,
		CauseBudgetSpent,
		CauseStateUnverified,
		CauseTaskUnreadable,
		CauseGateRunFailed,
		CauseReviewRejected,
		CauseReviewBlocked,
		CauseStaleEvidence,
		CauseAmbiguousResult,
		CauseRulesChanged,
		CauseNoChangeSource,
		CauseInputsChanged,
		CauseEmptyChange,
		CauseWorktreeMismatch,
		CauseCheckoutFailed,
		CauseSymlinkEscape,
		CauseSubmoduleUnscanned,
		CauseResultTooLarge,
		CauseHistoryFull,
		CauseKeyExposed,
		CauseTestsMissing,
		CauseTestsModified,
		CauseTestsWeakened,
		CauseSuppressionAdded,
		CauseTestIntegrityOff,
		CauseTestsDropped,
		CauseHoldoutFailed,
		CauseSkipAdded,
		CauseRepositoryCorrupt,
		CauseProviderUnknown,
		CauseStubConfirmed,
		CauseBaseUnpinned,
		CauseScopeShared,
		CauseUndeclaredChange,
		CausePolicyNotInBase,
		CauseStubUnreadable,
		CauseClaimContradicted,
		CauseAttributionRefused,
	}
}
