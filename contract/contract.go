// Package contract owns the task contract (contract.json): its typed model with the geas gate
// extensions of SPEC §4.1, acceptance criteria and their detector specs, eval commands, rubric,
// profiles, and the checks that go beyond the schema (durations, regexes, paths that must stay
// inside the project, duplicate ids).
package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

// Escalation policies; DesignAuthorityReview is the default.
const (
	DesignAuthorityReview    = "design-authority-review"
	ProductAuthorityDecision = "product-authority-decision"
	Pivot                    = "pivot"
)

// Judge independence modes; Enforce is the default.
const (
	Enforce = "enforce"
	Strict  = "strict"
	Off     = "off"
)

// DefaultEvalTimeout applies when neither the command nor the contract sets one.
const DefaultEvalTimeout = 10 * time.Minute

// Contract is a parsed and validated contract.json.
type Contract struct {
	TaskID             string        `json:"task_id"`
	Title              string        `json:"title"`
	Status             vocab.State   `json:"status"`
	RiskLevel          vocab.Risk    `json:"risk_level"`
	GateProfile        vocab.Profile `json:"gate_profile"`
	AcceptanceCriteria []Criterion   `json:"acceptance_criteria"`
	EvalCommands       []EvalCommand `json:"-"`
	EvalTimeout        time.Duration `json:"-"` // eval_timeout, or DefaultEvalTimeout
	// EvalTimeoutSet says the contract sets eval_timeout; without it a project policy's default
	// applies instead of DefaultEvalTimeout.
	EvalTimeoutSet bool    `json:"-"`
	Rubric         Rubric  `json:"rubric"`
	RetryBudget    int     `json:"retry_budget"`
	Scope          Scope   `json:"scope"`
	Routing        Routing `json:"routing"`
	BaseSnapshot   string  `json:"base_snapshot"`
	// EscalationPolicy is escalation_policy, or DesignAuthorityReview when the contract sets none:
	// the policy in force, which the ledger writes into an escalation's decision.
	EscalationPolicy  string `json:"escalation_policy"`
	StubCap           *int   `json:"stub_cap"`
	JudgeIndependence string `json:"judge_independence"`
	// Tests are the contract's test-integrity settings (SPEC §5.2a).
	Tests Tests `json:"tests"`

	// Raw is the file as read, for digests and for rewriting the status.
	Raw []byte `json:"-"`
}

// Criterion is one acceptance criterion. A string item in the file is {criterion: item}.
type Criterion struct {
	ID        string    `json:"id,omitempty"`
	Criterion string    `json:"criterion"`
	Check     *Detector `json:"check,omitempty"`
}

// UnmarshalJSON accepts the geas string form and the object form.
func (c *Criterion) UnmarshalJSON(b []byte) error {
	var s string
	// An object never decodes into a string: it is not tried (a failed decode scans the whole
	// value and builds an error, before the object is decoded anyway).
	if !isObject(b) && json.Unmarshal(b, &s) == nil {
		*c = Criterion{Criterion: s}
		return nil
	}
	type plain Criterion
	return json.Unmarshal(b, (*plain)(c))
}

// Detector is the mechanical check of a criterion (SPEC §5.5).
type Detector struct {
	Type       string   `json:"type"`
	Command    string   `json:"command,omitempty"`
	Args       []string `json:"args,omitempty"`
	ExpectExit int      `json:"expect_exit,omitempty"`
	Timeout    string   `json:"timeout,omitempty"`
	Path       string   `json:"path,omitempty"`
	NonEmpty   bool     `json:"non_empty,omitempty"`
	Artifact   string   `json:"artifact,omitempty"`
	Pattern    string   `json:"pattern,omitempty"`
	Metric     string   `json:"metric,omitempty"`
	Op         string   `json:"op,omitempty"`
	Value      float64  `json:"value,omitempty"`
	Standard   string   `json:"standard,omitempty"`
	MinScore   *float64 `json:"min_score,omitempty"`
}

// Detector types.
const (
	DetectScript     = "script"
	DetectFileExists = "file_exists"
	DetectRegexMatch = "regex_match"
	DetectThreshold  = "threshold"
	DetectJudge      = "judge"
)

// EvalCommand is one tier-1 command. A string item in the file is {run: item}.
type EvalCommand struct {
	Run        string            `json:"run"`
	Timeout    string            `json:"timeout,omitempty"`
	Workdir    string            `json:"workdir,omitempty"`
	Env        map[string]string `json:"env,omitempty"`
	ExpectExit int               `json:"expect_exit,omitempty"`
	Metrics    map[string]string `json:"metrics,omitempty"`
	// Results, when set, says where the command's test results are and how they are written.
	Results *Results `json:"results,omitempty"`
}

// The formats of Results (SPEC §5.2a).
const (
	ResultsGoTestJSON = "go-test-json" // the command's output is `go test -json`
	ResultsTAP        = "tap"          // the command's output is TAP
	ResultsJUnit      = "junit"        // the command writes JUnit XML files that Glob matches
)

// Results declares an eval command's test results: "go-test-json" or "tap" in the file (read from
// the command's output), or {"junit": GLOB} (the JUnit XML files the command writes, GLOB a
// doublestar pattern relative to the project root).
type Results struct {
	Format string
	Glob   string
}

// JSONShape says which names Results' UnmarshalJSON reads from the object form.
func (r *Results) JSONShape() *schemas.Shape {
	return schemas.Object(map[string]*schemas.Shape{"junit": nil})
}

// UnmarshalJSON reads the string form (a format name) and the object form {"junit": GLOB}.
func (r *Results) UnmarshalJSON(b []byte) error {
	if !isObject(b) {
		var f string
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
		*r = Results{Format: f}
		return nil
	}
	var o struct {
		JUnit *string `json:"junit"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	if o.JUnit == nil {
		return errors.New(`results: an object must be {"junit": GLOB}`)
	}
	*r = Results{Format: ResultsJUnit, Glob: *o.JUnit}
	return nil
}

// MarshalJSON writes the form UnmarshalJSON reads.
func (r Results) MarshalJSON() ([]byte, error) {
	if r.Format == ResultsJUnit {
		return json.Marshal(map[string]string{"junit": r.Glob})
	}
	return json.Marshal(r.Format)
}

// UnmarshalJSON accepts the geas string form and the object form.
func (e *EvalCommand) UnmarshalJSON(b []byte) error {
	var s string
	if !isObject(b) && json.Unmarshal(b, &s) == nil { // as Criterion's
		*e = EvalCommand{Run: s}
		return nil
	}
	type plain EvalCommand
	return json.Unmarshal(b, (*plain)(e))
}

// isObject reports whether b, a JSON value as encoding/json hands it to UnmarshalJSON (no white
// space around it), is an object.
func isObject(b []byte) bool { return len(b) > 0 && b[0] == '{' }

// Rubric holds the scored dimensions.
type Rubric struct {
	Dimensions []Dimension `json:"dimensions"`
}

// Dimension is one rubric dimension with its threshold and, optionally, its evaluators.
type Dimension struct {
	Name       string   `json:"name"`
	Threshold  int      `json:"threshold"`
	Evaluators []string `json:"-"`
}

// JSONShape says which names Dimension's UnmarshalJSON reads, for the exact-key check.
func (d *Dimension) JSONShape() *schemas.Shape {
	return schemas.Object(map[string]*schemas.Shape{"name": nil, "threshold": nil, "evaluator": nil})
}

// UnmarshalJSON reads evaluator as one agent type or a list of them.
func (d *Dimension) UnmarshalJSON(b []byte) error {
	var raw struct {
		Name      string          `json:"name"`
		Threshold int             `json:"threshold"`
		Evaluator json.RawMessage `json:"evaluator"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*d = Dimension{Name: raw.Name, Threshold: raw.Threshold}
	if len(raw.Evaluator) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(raw.Evaluator, &one) == nil {
		d.Evaluators = []string{one}
		return nil
	}
	return json.Unmarshal(raw.Evaluator, &d.Evaluators)
}

// Scope lists the surfaces a task may change and the globs whose changes are only minor.
type Scope struct {
	Surfaces []string `json:"surfaces"`
	Shared   []string `json:"shared,omitempty"`
}

// Tests lists the protected checks a task may change and the globs it adds to the protected table
// (SPEC §5.2a). may_change is honoured only under rules an authority approved.
type Tests struct {
	MayChange []string `json:"may_change,omitempty"`
	Protected []string `json:"protected,omitempty"`
}

// Routing names the builder and the reviewers a task requires.
//
// geas v1.0 names agent types (primary_worker_type, required_reviewer_types); geas v1.4.0 names
// slots (primary_worker_slot, required_reviewer_slots: "implementer", "quality", "design-authority",
// ...) and may name the types beside them. Parse makes PrimaryWorkerType and
// RequiredReviewerTypes the roles the gate judges by, each on its own: the type the contract names,
// else its slot (SPEC: "a contract that names both slots and types is read by its types"). A slot
// is then matched to evidence as an agent type is: the evidence file's name or its agent
// ("quality.json", or agent "quality" or "quality-review"). So geas v1.4.0's own example, which
// names implementer/software-engineer and design-authority+quality/design-authority+qa-engineer,
// is judged exactly as its v1.0 equivalent (software-engineer builds, design-authority and
// qa-engineer review), and a slots-only contract asks for evidence of agents named after the slots.
type Routing struct {
	PrimaryWorkerType     string   `json:"primary_worker_type,omitempty"`
	RequiredReviewerTypes []string `json:"required_reviewer_types,omitempty"`
	// PrimaryWorkerSlot and RequiredReviewerSlots are the geas v1.4.0 slots as the file names them.
	PrimaryWorkerSlot     string   `json:"primary_worker_slot,omitempty"`
	RequiredReviewerSlots []string `json:"required_reviewer_slots,omitempty"`
	// ReviewersFromSlots says RequiredReviewerTypes are the slots (the contract names no
	// reviewer types): the default rubric evaluators, which name agent types, then also take the
	// slots those types fill (WithSlots).
	ReviewersFromSlots bool `json:"-"`
	// WorkerFromSlot says PrimaryWorkerType is the slot (the contract names no worker type): every
	// agent type that fills that slot in geas v1.4.0's profiles (ProfileSlots) is then the
	// builder's too, since the contract does not say which of them builds.
	WorkerFromSlot bool `json:"-"`
}

// ProfileSlots maps each agent type of geas v1.4.0's software and research profiles to the slot
// it fills there (geas v1.4.0 docs/reference/AGENTS.md); the authorities are their own slots.
var ProfileSlots = map[string]string{
	"software-engineer": "implementer", "qa-engineer": "quality", "security-engineer": "risk",
	"platform-engineer": "operations", "technical-writer": "communication",
	"literature-analyst": "implementer", "research-analyst": "implementer",
	"methodology-reviewer": "quality", "research-integrity-reviewer": "risk",
	"research-engineer": "operations", "research-writer": "communication",
}

// WithSlots returns types, and when the reviewers are slots (ReviewersFromSlots) after them the
// slots those types fill (ProfileSlots), each once: a default evaluator named by type
// (qa-engineer) is then also found under its slot (quality) in a contract routed by slots alone.
func (r Routing) WithSlots(types []string) []string {
	if !r.ReviewersFromSlots {
		return types
	}
	out := slices.Clone(types)
	for _, t := range types {
		if s := ProfileSlots[t]; s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// resolveSlots makes the slots stand for the types the contract does not name (see Routing).
func (r *Routing) resolveSlots() {
	if r.PrimaryWorkerType == "" && r.PrimaryWorkerSlot != "" {
		r.PrimaryWorkerType = r.PrimaryWorkerSlot
		r.WorkerFromSlot = true
	}
	if len(r.RequiredReviewerTypes) == 0 && len(r.RequiredReviewerSlots) > 0 {
		r.RequiredReviewerTypes = slices.Clone(r.RequiredReviewerSlots)
		r.ReviewersFromSlots = true
	}
}

// EffectiveJudgeIndependence returns the contract's mode, else def, else Enforce.
func (c *Contract) EffectiveJudgeIndependence(def string) string {
	switch {
	case c.JudgeIndependence != "":
		return c.JudgeIndependence
	case def != "":
		return def
	}
	return Enforce
}

// document is what Parse decodes a contract.json into. An alias of an unnamed struct, as the
// decoding target always was: encoding/json names the target type in the error of a number it
// cannot hold ("Go struct field .Contract.retry_budget"), which the report shows.
type document = struct {
	Contract
	EvalCommands []EvalCommand `json:"eval_commands"`
	EvalTimeout  string        `json:"eval_timeout"`
}

// documentShape is the shape of *document, computed once.
var documentShape = schemas.ShapeFor[*document]()

// Parse validates data against the contract schema, decodes it, and applies the checks the schema
// cannot express. Invalid input returns a *schemas.SyntaxError or *schemas.ValidationError naming
// file and the JSON pointer of each bad field.
func Parse(file string, data []byte) (*Contract, error) {
	var raw document
	// Exactly as the schema validated it: a key equal to a field only under case folding
	// ("Eval_Commands") makes the contract invalid (SPEC §2 invariant 8).
	if err := schemas.DecodeExactAs(schemas.Contract, file, data, &raw, documentShape()); err != nil {
		return nil, err
	}
	c := raw.Contract
	c.Routing.resolveSlots()
	c.EvalCommands = raw.EvalCommands
	c.EvalTimeout = DefaultEvalTimeout
	if c.EscalationPolicy == "" {
		c.EscalationPolicy = DesignAuthorityReview
	}
	c.Raw = bytes.Clone(data)
	var probs problems
	// The schema only says task_id is a string; an empty or path-like id would let a contract
	// stand for a task it does not name.
	if err := vocab.ValidateID("task", c.TaskID); err != nil {
		probs.add("/task_id", "%v", err)
	}
	if raw.EvalTimeout != "" {
		d, err := parseTimeout(raw.EvalTimeout)
		if err != nil {
			probs.add("/eval_timeout", "%v", err)
		}
		c.EvalTimeout, c.EvalTimeoutSet = d, true
	}
	probs.checkEvalCommands(c.EvalCommands)
	probs.checkCriteria(c.AcceptanceCriteria)
	probs.checkDimensions(c.Rubric.Dimensions)
	probs.checkScope(c.Scope)
	probs.checkTests(c.Tests)
	if len(probs) > 0 {
		slices.SortStableFunc(probs, func(a, b schemas.Problem) int { return strings.Compare(a.Pointer, b.Pointer) })
		return nil, &schemas.ValidationError{File: file, Kind: schemas.Contract, Problems: probs}
	}
	return &c, nil
}

// problems are what Parse finds wrong beyond the schema, each at its JSON pointer.
type problems []schemas.Problem

func (probs *problems) add(ptr, format string, args ...any) {
	*probs = append(*probs, schemas.Problem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

// checkEvalCommands: each command is not empty, its timeout parses, its workdir and its JUnit
// results glob are relative paths inside the project, and each metric is a regex with exactly one
// capture group.
func (probs *problems) checkEvalCommands(cmds []EvalCommand) {
	for i, e := range cmds {
		at := fmt.Sprintf("/eval_commands/%d", i)
		if strings.TrimSpace(e.Run) == "" {
			probs.add(at, "empty command")
		}
		if e.Timeout != "" {
			if _, err := parseTimeout(e.Timeout); err != nil {
				probs.add(at+"/timeout", "%v", err)
			}
		}
		if e.Workdir != "" {
			if err := checkRelPath(e.Workdir); err != nil {
				probs.add(at+"/workdir", "%v", err)
			}
		}
		if r := e.Results; r != nil && r.Format == ResultsJUnit {
			// A glob that matches nothing, or leaves the project, would read as missing results
			// and spend a retry: it is an invalid contract instead.
			if err := checkRelPath(r.Glob); err != nil {
				probs.add(at+"/results/junit", "%v", err)
			}
			if !doublestar.ValidatePattern(r.Glob) {
				probs.add(at+"/results/junit", "malformed glob %q", r.Glob)
			}
		}
		for name, expr := range e.Metrics {
			re, err := regexp.Compile(expr)
			switch {
			case err != nil:
				probs.add(at+"/metrics/"+name, "bad regex: %v", err)
			case re.NumSubexp() != 1:
				probs.add(at+"/metrics/"+name, "regex must have exactly one capture group, has %d", re.NumSubexp())
			}
		}
	}
}

// checkCriteria: criterion ids are unique, and a detector's timeout parses and its path and
// artifact are relative paths inside the project.
func (probs *problems) checkCriteria(criteria []Criterion) {
	ids := map[string]int{}
	for i, cr := range criteria {
		at := fmt.Sprintf("/acceptance_criteria/%d", i)
		if cr.ID != "" {
			if j, dup := ids[cr.ID]; dup {
				probs.add(at+"/id", "duplicate criterion id %q (also criterion %d)", cr.ID, j+1)
			}
			ids[cr.ID] = i
		}
		if d := cr.Check; d != nil {
			if d.Timeout != "" {
				if _, err := parseTimeout(d.Timeout); err != nil {
					probs.add(at+"/check/timeout", "%v", err)
				}
			}
			for field, p := range map[string]string{"path": d.Path, "artifact": d.Artifact} {
				if p == "" {
					continue
				}
				if err := checkRelPath(p); err != nil {
					probs.add(at+"/check/"+field, "%v", err)
				}
			}
		}
	}
}

// checkDimensions: rubric dimension names are unique.
func (probs *problems) checkDimensions(dimensions []Dimension) {
	dims := map[string]bool{}
	for i, d := range dimensions {
		if dims[d.Name] {
			probs.add(fmt.Sprintf("/rubric/dimensions/%d/name", i), "duplicate dimension %q", d.Name)
		}
		dims[d.Name] = true
	}
}

// checkTests: every may_change entry and protected glob is a relative path inside the project and
// a well-formed glob (a may_change entry FILE#KEY is judged by its FILE).
func (probs *problems) checkTests(t Tests) {
	for field, globs := range map[string][]string{"may_change": t.MayChange, "protected": t.Protected} {
		for i, g := range globs {
			if field == "may_change" {
				g, _, _ = strings.Cut(g, "#")
			}
			if err := checkRelPath(g); err != nil {
				probs.add(fmt.Sprintf("/tests/%s/%d", field, i), "%v", err)
			}
			if !doublestar.ValidatePattern(g) {
				probs.add(fmt.Sprintf("/tests/%s/%d", field, i), "malformed glob %q", g)
			}
		}
	}
}

// checkScope: every surface and shared glob is a relative path inside the project and a
// well-formed glob.
func (probs *problems) checkScope(scope Scope) {
	for field, globs := range map[string][]string{"surfaces": scope.Surfaces, "shared": scope.Shared} {
		for i, g := range globs {
			if err := checkRelPath(g); err != nil {
				probs.add(fmt.Sprintf("/scope/%s/%d", field, i), "%v", err)
			}
			// A malformed glob matches nothing: it must fail here, not later as a scope violation
			// that spends a retry (SPEC §5.3 Part B).
			if !doublestar.ValidatePattern(g) {
				probs.add(fmt.Sprintf("/scope/%s/%d", field, i), "malformed glob %q", g)
			}
		}
	}
}

// DefaultMaxBytes is the gate's default limit on a contract.json (SPEC §10: 4 MiB); a policy may
// lower it or raise it up to MaxBytes, and the gate refuses a contract over the effective limit.
const DefaultMaxBytes = 4 << 20

// MaxBytes is the size above which a contract.json is refused before it is read: the fourfold
// ceiling of DefaultMaxBytes, so every reader accepts whatever a policy lets the gate accept.
const MaxBytes = 4 * DefaultMaxBytes

// Load reads and parses name through root (normally .geas), so the path cannot leave it. A file
// over MaxBytes, or one that is not a regular file (a named pipe would block forever), is refused
// unread.
func Load(root *os.Root, name string) (*Contract, error) {
	return LoadFrom(fsutil.RootReader(root), name)
}

// LoadFrom is Load through r (a task directory opened once, fsutil.Dir); name is relative to
// r's root, as for Load.
func LoadFrom(r fsutil.Reader, name string) (*Contract, error) {
	return LoadKnown(r, name, nil)
}

// LoadKnown is LoadFrom for a second read of the same file (SPEC §7.4's re-read of the inputs):
// when the file still holds known.Raw byte for byte, known itself is the answer (Parse is a
// function of the bytes and the name, and known parsed without error); else as LoadFrom.
func LoadKnown(r fsutil.Reader, name string, known *Contract) (*Contract, error) {
	data, err := r.ReadLimited(name, MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("read contract: %w", err)
	}
	if known != nil && bytes.Equal(data, known.Raw) {
		return known, nil
	}
	return Parse(name, data)
}

func parseTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q: %w", s, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("duration %q must be positive", s)
	}
	return d, nil
}

// ErrEscapes marks a path that would leave the project root.
var ErrEscapes = errors.New("path escapes the project root")

// checkRelPath refuses absolute paths and paths with a ".." element: every path in a contract is
// relative to the project root and stays inside it. (Symlinks are stopped later by os.Root.)
func checkRelPath(p string) error {
	p = strings.ReplaceAll(p, "\\", "/")
	if path.IsAbs(p) || (len(p) > 1 && p[1] == ':') {
		return fmt.Errorf("%w: %q is absolute", ErrEscapes, p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return fmt.Errorf("%w: %q contains \"..\"", ErrEscapes, p)
		}
	}
	return nil
}
