// Package policy is the project policy, .geas/gate-policy.json (SPEC §10): the built-in
// defaults, the parser that overrides them, the example geas init writes, and the tables the
// policy replaces (the protected test files and the test-integrity markers of SPEC §5.2a) with
// their matchers. The checks in tiers and the use cases in gate both read it.
package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

// File is the project policy under .geas/.
const File = "gate-policy.json"

// MaxBytes bounds what is read of a policy document (SPEC §10: 4 MiB). It is the one limit a
// policy cannot change: it is applied before the policy is read.
const MaxBytes = 4 << 20

// LimitCeiling is how far a policy may raise a size limit of SPEC §10 above its default.
const LimitCeiling = 4

// Policy holds the defaults of SPEC §10, overridden by .geas/gate-policy.json.
type Policy struct {
	Evaluators            map[string][]string
	StubCap               map[vocab.Risk]int
	StubPatterns          []*regexp.Regexp
	SharedGlobs           []string
	EvalTimeout           time.Duration
	OutputTailBytes       int
	ConsecutiveErrorLimit int
	JudgeIndependence     string
	MaxEvidenceBytes      int64
	EvalCheckout          string // EvalCheckoutWorktree or EvalCheckoutIsolated
	// EvalUser is the user eval commands and script detectors run as ("": the gate's own), and
	// KeyExposure what a run does when they could read the signing key (tiers/keyexposure.go).
	EvalUser    string
	KeyExposure string // KeyExposureRefuse or KeyExposureAccept
	// Size limits of SPEC §10 beyond the per-file evidence limit (see tiers/input_sizes.go and
	// tiers/bounds.go).
	MaxTotalEvidenceBytes int64
	MaxContractBytes      int64
	MaxRecordBytes        int64
	MaxHistoryBytes       int64
	// Tests are the test-integrity settings (SPEC §5.2a, tiers/integrity.go).
	Tests Tests
	// Holdout is the held-out checks (SPEC §5.2a, tiers/holdout.go); no commands: none.
	Holdout Holdout
}

// Holdout is the policy's holdout object: files outside the agents' reach (a directory, or
// a ref of another repository) and the commands run on the head with those files laid over it.
type Holdout struct {
	Dir      string // an absolute directory, or ""
	Repo     string // with Ref: another repository
	Ref      string
	Commands []contract.EvalCommand
	Timeout  time.Duration // 0: the policy's eval_timeout
}

// Tests is the policy's tests object (SPEC §5.2a).
type Tests struct {
	// Off is tests.integrity "off": the test-integrity checks do not run, and every run says so.
	Off bool
	// CompareBase is tests.compare_base: the eval commands that declare results also run at the
	// base, and every test that passed there must pass at the head (tiers/baseline.go).
	CompareBase bool
	// Protected is the protected table: tests.protected, or defaultProtected.
	Protected []string
	// Markers are the compiled marker tables: the defaults with the languages tests.markers lists
	// replaced.
	Markers *Markers
}

// Where tier 1 and the detectors run (policy eval_checkout, SPEC §5.1).
const (
	EvalCheckoutWorktree = "worktree"
	EvalCheckoutIsolated = "isolated"
)

// What a run does when the code it runs could read the signing key (policy key_exposure).
const (
	KeyExposureRefuse = "refuse"
	KeyExposureAccept = "accept"
)

// Default returns the built-in defaults of SPEC §10.
func Default() Policy {
	return Policy{
		Evaluators: map[string][]string{
			"code_quality":         {"design-authority"},
			"output_quality":       {"design-authority"},
			"core_interaction":     {"qa-engineer"},
			"feature_completeness": {"qa-engineer"},
			"output_completeness":  {"qa-engineer"},
			"regression_safety":    {"qa-engineer"},
			"ux_clarity":           {"qa-engineer", "technical-writer"},
			"visual_coherence":     {"qa-engineer", "technical-writer"},
		},
		StubCap:      map[vocab.Risk]int{vocab.RiskLow: 3, vocab.RiskNormal: 2, vocab.RiskHigh: 0, vocab.RiskCritical: 0},
		StubPatterns: slices.Clone(defaultStubPatterns()),
		SharedGlobs: []string{
			"go.mod", "go.sum", "package.json", "package-lock.json", "pnpm-lock.yaml", "yarn.lock",
			"Cargo.toml", "Cargo.lock", "*.lock", ".gitignore",
		},
		EvalTimeout:           contract.DefaultEvalTimeout,
		OutputTailBytes:       8 << 10,
		ConsecutiveErrorLimit: 3,
		JudgeIndependence:     "enforce",
		MaxEvidenceBytes:      evidence.DefaultMaxBytes,
		EvalCheckout:          EvalCheckoutWorktree,
		KeyExposure:           KeyExposureRefuse,
		MaxTotalEvidenceBytes: evidence.DefaultMaxTotalBytes,
		MaxContractBytes:      contract.DefaultMaxBytes,
		MaxRecordBytes:        record.DefaultMaxBytes,
		MaxHistoryBytes:       record.DefaultMaxHistoryBytes,
		Tests:                 Tests{Protected: slices.Clone(defaultProtected), Markers: defaultMarkerTables()},
	}
}

// defaultStubPatterns are the built-in stub patterns, compiled once a process: every run reads
// the defaults (twice with the re-read of SPEC §7.4), and a *regexp.Regexp is safe to share
// (nothing calls Longest on them). Each Policy gets its own slice of them.
var defaultStubPatterns = sync.OnceValue(func() []*regexp.Regexp {
	return mustCompileAll(
		`(?i)TODO|FIXME|XXX`, `(?i)not implemented`, `(?i)unimplemented`, `(?i)panic\("todo`,
		`(?i)NotImplementedError`, `(?i)raise NotImplemented`, `(?i)throw new Error\(["']not implemented`,
	)
})

func mustCompileAll(exprs ...string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(exprs))
	for i, e := range exprs {
		out[i] = regexp.MustCompile(e)
	}
	return out
}

// Load returns the defaults overridden by .geas/gate-policy.json when it exists. An invalid
// policy file is an error: the gate does not guess what a broken policy meant.
func Load(geas *os.Root) (Policy, error) {
	p, _, err := loadFile(geas)
	return p, err
}

// loadFile is Load that also returns the bytes it read (nil when there is no policy).
func loadFile(geas *os.Root) (Policy, []byte, error) {
	data, err := fsutil.ReadLimited(geas, File, MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil, nil
	}
	if err != nil {
		return Default(), nil, fmt.Errorf("read .geas/%s: %w", File, err)
	}
	p, err := Parse(".geas/"+File, data)
	return p, data, err
}

// policyDocumentShape is the shape of *policyDocument, computed once.
var policyDocumentShape = schemas.ShapeFor[*policyDocument]()

// policyDocument is .geas/gate-policy.json as its schema describes it; a zero field is not set.
type policyDocument struct {
	Evaluators            map[string][]string `json:"evaluators"`
	StubCap               map[string]int      `json:"stub_cap"`
	StubPatterns          []string            `json:"stub_patterns"`
	SharedGlobs           []string            `json:"shared_globs"`
	EvalTimeout           string              `json:"eval_timeout"`
	OutputTailBytes       int                 `json:"output_tail_bytes"`
	ConsecutiveErrorLimit int                 `json:"consecutive_error_limit"`
	JudgeIndependence     string              `json:"judge_independence"`
	MaxEvidenceBytes      int64               `json:"max_evidence_bytes"`
	EvalCheckout          string              `json:"eval_checkout"`
	EvalUser              string              `json:"eval_user,omitempty"`
	KeyExposure           string              `json:"key_exposure"`
	MaxTotalEvidenceBytes int64               `json:"max_total_evidence_bytes"`
	MaxContractBytes      int64               `json:"max_contract_bytes"`
	MaxRecordBytes        int64               `json:"max_record_bytes"`
	MaxHistoryBytes       int64               `json:"max_history_bytes"`
	Tests                 *policyTests        `json:"tests"`
	Holdout               *policyHoldout      `json:"holdout,omitempty"`
}

// policyHoldout is the policy's holdout object as its schema describes it.
type policyHoldout struct {
	Dir string `json:"dir"`
	Ref *struct {
		Repo string `json:"repo"`
		Ref  string `json:"ref"`
	} `json:"ref"`
	Commands []contract.EvalCommand `json:"commands"`
	Timeout  string                 `json:"timeout"`
}

// policyTests is the policy's tests object as its schema describes it.
type policyTests struct {
	Integrity   string         `json:"integrity"`
	CompareBase bool           `json:"compare_base"`
	Protected   []string       `json:"protected"`
	Markers     *policyMarkers `json:"markers"`
}

type policyMarkers struct {
	Skip     map[string][]string `json:"skip"`
	Assert   map[string][]string `json:"assert"`
	Suppress []string            `json:"suppress"`
}

// Parse returns the defaults overridden by the policy document data; file names it in errors.
func Parse(file string, data []byte) (Policy, error) {
	p := Default()
	if err := schemas.Validate(schemas.GatePolicy, file, data); err != nil {
		return p, err
	}
	var raw policyDocument
	// Exactly as the schema validated it (SPEC §2 invariant 8): "Shared_Globs" is not shared_globs.
	if err := schemas.DecodeExactAs(schemas.GatePolicy, file, data, &raw, policyDocumentShape()); err != nil {
		return p, err
	}
	for dim, ev := range raw.Evaluators {
		p.Evaluators[dim] = ev
	}
	for level, n := range raw.StubCap {
		p.StubCap[vocab.Risk(level)] = n
	}
	if err := p.setStubPatterns(file, raw.StubPatterns); err != nil {
		return p, err
	}
	if err := p.setSharedGlobs(file, raw.SharedGlobs); err != nil {
		return p, err
	}
	if err := p.setEvalTimeout(file, raw.EvalTimeout); err != nil {
		return p, err
	}
	if raw.OutputTailBytes > 0 {
		p.OutputTailBytes = raw.OutputTailBytes
	}
	if raw.ConsecutiveErrorLimit > 0 {
		p.ConsecutiveErrorLimit = raw.ConsecutiveErrorLimit
	}
	if raw.JudgeIndependence != "" {
		p.JudgeIndependence = raw.JudgeIndependence
	}
	if err := p.setLimits(file, raw); err != nil {
		return p, err
	}
	if raw.EvalCheckout != "" {
		p.EvalCheckout = raw.EvalCheckout // the schema allows worktree and isolated only
	}
	p.EvalUser = raw.EvalUser
	if raw.KeyExposure != "" {
		p.KeyExposure = raw.KeyExposure // the schema allows refuse and accept only
	}
	if err := p.setTests(file, raw.Tests); err != nil {
		return p, err
	}
	if err := p.setHoldout(file, raw.Holdout); err != nil {
		return p, err
	}
	return p, nil
}

// setTests applies the policy's tests object (nil: not set): integrity, the protected table, and
// the marker lists it replaces, each regular expression compiled here so that a bad one makes the
// policy invalid rather than a check that matches nothing.
func (p *Policy) setTests(file string, t *policyTests) error {
	if t == nil {
		return nil
	}
	p.Tests.Off = t.Integrity == "off"
	p.Tests.CompareBase = t.CompareBase
	if t.Protected != nil {
		for i, g := range t.Protected {
			if !doublestar.ValidatePattern(strings.ToLower(g)) {
				return policyProblem(file, fmt.Sprintf("/tests/protected/%d", i), fmt.Sprintf("malformed glob %q", g))
			}
		}
		p.Tests.Protected = t.Protected
	}
	if t.Markers != nil {
		m, err := buildMarkerTables(t.Markers.Skip, t.Markers.Assert, t.Markers.Suppress)
		if err != nil {
			return policyProblem(file, "/tests/markers", err.Error())
		}
		p.Tests.Markers = m
	}
	return nil
}

// setHoldout applies the policy's holdout object (nil: none).
func (p *Policy) setHoldout(file string, h *policyHoldout) error {
	if h == nil {
		return nil
	}
	hp := Holdout{Dir: h.Dir, Commands: h.Commands}
	if h.Ref != nil {
		hp.Repo, hp.Ref = h.Ref.Repo, h.Ref.Ref
	}
	if h.Timeout != "" {
		d, err := time.ParseDuration(h.Timeout)
		if err != nil || d <= 0 {
			return policyProblem(file, "/holdout/timeout", fmt.Sprintf("bad duration %q", h.Timeout))
		}
		hp.Timeout = d
	}
	p.Holdout = hp
	return nil
}

// policyProblem is the validation error of a policy whose value at pointer the schema cannot judge.
func policyProblem(file, pointer, message string) error {
	return &schemas.ValidationError{File: file, Kind: schemas.GatePolicy,
		Problems: []schemas.Problem{{Pointer: pointer, Message: message}}}
}

// setStubPatterns replaces the stub patterns when the policy sets them (nil: not set).
func (p *Policy) setStubPatterns(file string, exprs []string) error {
	if exprs == nil {
		return nil
	}
	p.StubPatterns = nil
	for i, expr := range exprs {
		re, err := regexp.Compile("(?i)" + expr) // stub patterns match case-insensitively (SPEC §10)
		if err != nil {
			return policyProblem(file, fmt.Sprintf("/stub_patterns/%d", i), "bad regex: "+err.Error())
		}
		p.StubPatterns = append(p.StubPatterns, re)
	}
	return nil
}

// setSharedGlobs replaces the shared globs when the policy sets them (nil: not set).
func (p *Policy) setSharedGlobs(file string, globs []string) error {
	if globs == nil {
		return nil
	}
	for i, g := range globs {
		if !doublestar.ValidatePattern(g) {
			return policyProblem(file, fmt.Sprintf("/shared_globs/%d", i), fmt.Sprintf("malformed glob %q", g))
		}
	}
	p.SharedGlobs = globs
	return nil
}

// setEvalTimeout sets the eval timeout when the policy sets one ("": not set).
func (p *Policy) setEvalTimeout(file, timeout string) error {
	if timeout == "" {
		return nil
	}
	d, err := time.ParseDuration(timeout)
	if err != nil || d <= 0 {
		return policyProblem(file, "/eval_timeout", fmt.Sprintf("bad duration %q", timeout))
	}
	p.EvalTimeout = d
	return nil
}

// setLimits sets the size limits the policy sets, each at most LimitCeiling times its default.
func (p *Policy) setLimits(file string, raw policyDocument) error {
	for _, l := range []struct {
		key string
		set int64
		dst *int64
	}{
		{"max_evidence_bytes", raw.MaxEvidenceBytes, &p.MaxEvidenceBytes},
		{"max_total_evidence_bytes", raw.MaxTotalEvidenceBytes, &p.MaxTotalEvidenceBytes},
		{"max_contract_bytes", raw.MaxContractBytes, &p.MaxContractBytes},
		{"max_record_bytes", raw.MaxRecordBytes, &p.MaxRecordBytes},
		{"max_history_bytes", raw.MaxHistoryBytes, &p.MaxHistoryBytes},
	} {
		if l.set == 0 {
			continue
		}
		// SPEC §10: a policy may lower a limit, and raise it at most fourfold. The defaults are
		// what the readers of every other command are built for; an unbounded raise would let
		// a policy in the repository take the gate's memory wherever it likes.
		if ceiling := LimitCeiling * *l.dst; l.set > ceiling {
			return policyProblem(file, "/"+l.key, fmt.Sprintf("%s %d is above its ceiling %d (%d × the default %d): a policy may lower a size limit, and raise it at most %d-fold",
				l.key, l.set, ceiling, LimitCeiling, *l.dst, LimitCeiling))
		}
		*l.dst = l.set
	}
	return nil
}

// IsStub reports whether a line of text matches a stub pattern, and which.
func (p Policy) IsStub(line string) (string, bool) {
	for _, re := range p.StubPatterns {
		if re.MatchString(line) {
			return re.String(), true
		}
	}
	return "", false
}

// StubCapFor returns the cap for a risk level; an unknown level gets the strictest cap, 0.
func (p Policy) StubCapFor(risk vocab.Risk) int {
	if n, ok := p.StubCap[vocab.Risk(strings.ToLower(string(risk)))]; ok {
		return n
	}
	return 0
}

// Clone is a deep copy of p's maps and slices; the compiled expressions, which nothing changes,
// are shared.
func (p Policy) Clone() Policy {
	c := p
	if p.Evaluators != nil {
		c.Evaluators = make(map[string][]string, len(p.Evaluators))
		for k, v := range p.Evaluators {
			c.Evaluators[k] = slices.Clone(v)
		}
	}
	c.StubCap = maps.Clone(p.StubCap)
	c.StubPatterns = slices.Clone(p.StubPatterns)
	c.SharedGlobs = slices.Clone(p.SharedGlobs)
	c.Holdout.Commands = slices.Clone(p.Holdout.Commands)
	return c
}
