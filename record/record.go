package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/jsonobj"
	"github.com/geas-dev/geas/schemas"
)

// The record's envelope: keys geas maintains itself, never written as a section.
var envelope = []string{"version", "task_id", "created_at", "updated_at"}

// The sections only the gate writes (SPEC §2.2, §7.4).
const (
	gateResult  = "gate_result"
	gateHistory = "gate_history"
	// legacyIntegration is the root key the earlier layout kept integration.json's content in.
	legacyIntegration = "integration"
)

// Record is a task's record.json. It keeps every top-level key as the raw JSON it was read with, in
// file order, so that writing one section rewrites nothing else an agent (or geas) put there, and
// it decodes the sections the gate reads into typed views when the record is built. A Record is
// changed only through SetSection and SetGateSections, which validate the whole result first.
type Record struct {
	file    string // the name used in errors
	members []jsonobj.Member

	taskID         string
	selfCheck      *SelfCheck
	implementation *ImplementationContract
	integration    *Integration
	history        []HistoryEntry

	store taskFiles // where history and integration live, and what is already written there

	// held, when set (Guard), is asked before each file Write writes: nil while the task lock
	// the record was read under is still held.
	held func() error
}

// SelfCheck is the implementer's self_check section: its own view of the work. The gate treats it
// as a claim (never as proof): low confidence raises rubric thresholds, known risks need handling,
// possible stubs are checked against the stub patterns.
type SelfCheck struct {
	Confidence    int      `json:"confidence"`
	KnownRisks    []string `json:"known_risks"`
	UntestedPaths []string `json:"untested_paths"`
	// UnverifiedCases is geas v1.4.0's name for untested_paths.
	UnverifiedCases []string       `json:"unverified_cases,omitempty"`
	Summary         string         `json:"summary"`
	PossibleStubs   []StubLocation `json:"possible_stubs,omitempty"`
}

// StubLocation is a place the implementer says may hold a stub. Line is 0 when only the file is
// named.
type StubLocation struct {
	Path string
	Line int
}

// ImplementationContract is the part of the implementation_contract section the gate reads.
type ImplementationContract struct {
	KnownRisks []string `json:"known_risks"`
	Status     string   `json:"status"`
}

// Integration is the integration section (a geas extension): whether the work was merged, and
// where. The gate's integration head is Commit when set.
type Integration struct {
	Status string `json:"status"`
	Branch string `json:"branch"`
	Commit string `json:"commit"`
}

// HistoryEntry is one entry of gate_history: one gate run (or another budget event, named by Kind),
// compact and hash-chained. Keys this version does not know are kept in Extra and written back, so
// an older binary rewriting a record never drops what a newer one recorded (or breaks its hashes).
type HistoryEntry struct {
	Kind              string
	RunID             string
	Verdict           string
	Causes            json.RawMessage
	RetryBudgetBefore *int
	RetryBudgetAfter  *int
	Head              string
	InputsSHA256      string
	RulesSHA256       string // the rules the entry was judged against, or pins (SPEC §4.4)
	StartedAt         string
	PrevHash          string
	Hash              string
	// HMAC is the hex HMAC-SHA256 of the entry's canonical form under GEAS_GATE_KEY (see
	// EntryHMAC); empty when the history is not signed.
	HMAC  string
	Extra map[string]json.RawMessage
}

// historyKeys are HistoryEntry's known keys, in the order MarshalJSON writes them.
var historyKeys = []string{
	"kind", "run_id", "verdict", "causes", "retry_budget_before", "retry_budget_after",
	"head", "inputs_sha256", "rules_sha256", "started_at", "prev_hash", "hash", "hmac",
}

// New returns a record with only its envelope, for a task that has none yet.
func New(taskID string, now time.Time) *Record {
	return &Record{
		file: RecordFile,
		members: []jsonobj.Member{
			{Key: "version", Value: jsonobj.String("1.0")},
			{Key: "task_id", Value: jsonobj.String(taskID)},
			{Key: "created_at", Value: jsonobj.String(Timestamp(now))},
		},
		taskID: taskID,
	}
}

// Parse validates data against the record schema and decodes it. file names the document in
// errors. A schema mismatch is the *schemas.ValidationError (or *schemas.SyntaxError) of
// schemas.Validate, unwrapped; a section the typed views cannot read (a confidence that is not an
// integer, a malformed stub location) is reported as a *schemas.ValidationError too, since the
// record is just as unusable.
func Parse(file string, data []byte) (*Record, error) {
	if err := validate(file, data); err != nil {
		return nil, err
	}
	members, err := jsonobj.Decode(data)
	if err != nil {
		return nil, invalid(file, "", err)
	}
	r, err := build(file, members)
	if err != nil {
		return nil, err
	}
	// The earlier layout kept gate_history and integration at the record's root (SPEC §3): they are
	// read from there, and the next Write moves them to their own files.
	r.store.legacy = r.index(gateHistory) >= 0 || r.index(legacyIntegration) >= 0
	if i := r.index(legacyIntegration); i >= 0 {
		r.store.integRaw = compactJSON(r.members[i].Value)
	}
	r.members = slices.DeleteFunc(r.members, func(m jsonobj.Member) bool { return m.Key == gateHistory || m.Key == legacyIntegration })
	return r, nil
}

// MaxBytes is the largest record.json geas reads; a bigger one is refused before it is parsed.
const MaxBytes = 64 << 20

// limits are the read limits Write keeps to, so that nothing it writes is refused when read back;
// tests lower them.
var limits = struct{ record, history int64 }{MaxBytes, MaxHistoryBytes}

// Load reads and parses the record at name (relative to root). A missing file is an error for which
// errors.Is(err, fs.ErrNotExist) holds.
//
// Readers without the task lock (verify, task show, the hook) read record.json and then its
// history while a gate run may be writing them, history first (the commit point), then record.json,
// then the events. Such a reader can hold a record.json from before the run and a history and event
// log from after it. A record whose gate_result lags its latest gate run is therefore read again,
// up to loadRetries times: once the run's events are logged its record.json is written, so a read
// after them sees it. What still lags after that is what the files hold, for the history check to
// report.
func Load(root *os.Root, name string) (*Record, error) {
	return load(files{fsutil.RootReader(root), root}, name, false)
}

// LoadFrom is Load(dir.Outer, name) with the reads of the task's files (record.json,
// gate-history.jsonl, integration.json, a run's result.json) made through dir, the task
// directory the caller opened (fsutil.OpenSubdir): one openat a file instead of a walk from the
// root. Its answers, errors included, are Load's (see fsutil.Dir). name is relative to
// dir.Outer.
func LoadFrom(dir *fsutil.Dir, name string) (*Record, error) {
	return load(files{dir, dir.Outer}, name, false)
}

// files is where Load reads from: the task's files through r, and the rest of .geas (the event
// log) through root, which is r's outer root.
type files struct {
	r    fsutil.Reader
	root *os.Root
}

// readOptional reads a file whose absence is no error (gate-history.jsonl, integration.json),
// the text of a missing file's error never shown: through a task directory, a file its handle
// finds missing is not looked for again from the root (fsutil.Dir.ReadLimitedAbsent).
func (f files) readOptional(name string, limit int64) ([]byte, error) {
	if d, ok := f.r.(*fsutil.Dir); ok {
		return d.ReadLimitedAbsent(name, limit)
	}
	return f.r.ReadLimited(name, limit)
}

// LoadToReplaceIntegration is Load for geas task integrate, which writes integration.json whole:
// an integration.json that cannot be read or parsed is not loaded (its problem is returned as
// bad), so that the command can replace it; every other file is read as Load reads it.
func LoadToReplaceIntegration(root *os.Root, name string) (r *Record, bad error, err error) {
	r, err = load(files{fsutil.RootReader(root), root}, name, true)
	if r != nil {
		bad = r.store.badInteg
	}
	return r, bad, err
}

func load(src files, name string, replaceInteg bool) (*Record, error) {
	r, err := loadOnce(src, name, replaceInteg)
	for i := 0; err == nil && i < loadRetries && r.ResultLags(); i++ {
		r, err = loadOnce(src, name, replaceInteg)
	}
	return r, err
}

// loadRetries bounds how many times Load reads a record again whose gate_result lags its history.
const loadRetries = 3

// ResultLags reports whether the latest history entry is a gate run that gate_result (as read, or
// as adopted from the run's result.json) does not name by its hash: a record read while a writer
// was between its files, which Load reads again.
func (r *Record) ResultLags() bool {
	n := len(r.history)
	if n == 0 {
		return false
	}
	last := r.history[n-1]
	if !last.IsGateRun() {
		return false
	}
	raw, ok := r.GateResult()
	if !ok {
		return true
	}
	var named struct {
		Hash string `json:"hash"`
	}
	return json.Unmarshal(raw, &named) != nil || named.Hash != last.Hash
}

// afterRecordRead, set by tests, runs between the read of record.json and that of its history: the
// moment a writer's run can fall into.
var afterRecordRead func()

func loadOnce(src files, name string, replaceInteg bool) (*Record, error) {
	if err := fsutil.CheckName(name); err != nil {
		return nil, fmt.Errorf("load record: %w", err)
	}
	// Through ReadLimited: a named pipe or a huge file must not hang or exhaust the reader.
	data, err := src.r.ReadLimited(name, MaxBytes)
	if afterRecordRead != nil {
		afterRecordRead()
	}
	if errors.Is(err, fs.ErrNotExist) && path.Base(name) == "record.json" {
		// record.json deleted while the history is there: the history is still the task's.
		return loadWithoutRecord(src, name, err, replaceInteg)
	}
	if err != nil {
		return nil, fmt.Errorf("load record: %w", err)
	}
	r, err := Parse(name, data)
	if err != nil {
		return nil, err
	}
	r.store.readSum = sha256Hex(data)
	if path.Base(name) == "record.json" {
		r.store.replaceInteg = replaceInteg
		if err := r.loadSiblings(src, path.Dir(name)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func invalid(file, pointer string, err error) *schemas.ValidationError {
	return &schemas.ValidationError{
		File:     file,
		Kind:     schemas.Record,
		Problems: []schemas.Problem{{Pointer: pointer, Message: err.Error()}},
	}
}

// readShape is what the typed views read from a record, for the exact-key check.
type readShape struct {
	TaskID         string                  `json:"task_id"`
	SelfCheck      *SelfCheck              `json:"self_check"`
	Implementation *ImplementationContract `json:"implementation_contract"`
	Integration    *Integration            `json:"integration"`
	GateHistory    []HistoryEntry          `json:"gate_history"`
}

// readShapeOf is the shape of readShape, computed once.
var readShapeOf = schemas.ShapeFor[readShape]()

// validate checks data against the record schema and refuses a key that equals a field the gate
// reads only under case folding ("Confidence", "SELF_CHECK"): such a record would mean one thing
// to the schema and another to a case-insensitive reader (SPEC §2 invariant 8).
func validate(file string, data []byte) error {
	doc, err := schemas.DecodeShaped(schemas.Record, file, data, readShapeOf())
	if err != nil {
		return err
	}
	if m, ok := doc.(map[string]any); ok {
		// The earlier layout's gate_history and integration are checked by their typed readers
		// (and checkLegacyIntegration): geas v1.0's schema, which the embedded one follows at the
		// root, has no place for them, and the next write moves them out.
		_, h := m[gateHistory]
		_, in := m[legacyIntegration]
		if h || in {
			rest := make(map[string]any, len(m))
			for k, v := range m {
				if k != gateHistory && k != legacyIntegration {
					rest[k] = v
				}
			}
			if in {
				if err := checkIntegration(file, m[legacyIntegration], "/"+legacyIntegration); err != nil {
					return err
				}
			}
			if h {
				if _, ok := m[gateHistory].([]any); !ok {
					return invalid(file, "/"+gateHistory, errors.New("gate_history must be an array"))
				}
			}
			doc = rest
		}
	}
	return schemas.ValidateValue(schemas.Record, file, doc)
}

// JSONShape says which names StubLocation's UnmarshalJSON reads from the object form.
func (l *StubLocation) JSONShape() *schemas.Shape {
	return schemas.Object(map[string]*schemas.Shape{"path": nil, "line": nil})
}

// JSONShape says which names HistoryEntry's UnmarshalJSON reads.
func (e *HistoryEntry) JSONShape() *schemas.Shape {
	f := map[string]*schemas.Shape{}
	for _, k := range historyKeys {
		f[k] = nil
	}
	return schemas.Object(f)
}

// build decodes the typed views of members into a new Record.
func build(file string, members []jsonobj.Member) (*Record, error) {
	r := &Record{file: file, members: members}
	for _, m := range members {
		at := "/" + m.Key
		var err error
		switch m.Key {
		case "task_id":
			err = unmarshalValue(m.Value, &r.taskID)
		case "self_check":
			r.selfCheck = new(SelfCheck)
			err = json.Unmarshal(m.Value, r.selfCheck)
		case "implementation_contract":
			r.implementation = new(ImplementationContract)
			err = json.Unmarshal(m.Value, r.implementation)
		case "integration":
			r.integration = new(Integration)
			err = json.Unmarshal(m.Value, r.integration)
		case gateResult:
			_, err = jsonobj.Decode(m.Value)
		case gateHistory:
			var items []json.RawMessage
			if err = unmarshalValue(m.Value, &items); err != nil {
				break
			}
			r.history = make([]HistoryEntry, len(items))
			for i, item := range items {
				if err = json.Unmarshal(item, &r.history[i]); err == nil {
					err = checkEntry(r.history[i])
				}
				if err != nil {
					at += "/" + strconv.Itoa(i)
					break
				}
			}
		}
		if err != nil {
			return nil, invalid(file, at, err)
		}
	}
	return r, nil
}

// TaskID returns the record's task_id.
func (r *Record) TaskID() string { return r.taskID }

// SelfCheck returns the self_check section, if the record has one.
func (r *Record) SelfCheck() (*SelfCheck, bool) {
	if r.selfCheck == nil {
		return nil, false
	}
	c := *r.selfCheck
	return &c, true
}

// ImplementationContract returns the implementation_contract section, if the record has one.
func (r *Record) ImplementationContract() (*ImplementationContract, bool) {
	if r.implementation == nil {
		return nil, false
	}
	c := *r.implementation
	return &c, true
}

// Integration returns the integration section, if the record has one.
func (r *Record) Integration() (*Integration, bool) {
	if r.integration == nil {
		return nil, false
	}
	c := *r.integration
	return &c, true
}

// GateResult returns the raw gate_result section (the latest run's full result), if present.
func (r *Record) GateResult() (json.RawMessage, bool) { return r.Section(gateResult) }

// History returns the gate_history entries, oldest first.
func (r *Record) History() []HistoryEntry { return slices.Clone(r.history) }

// Section returns a copy of the raw JSON of any top-level key, envelope keys included.
func (r *Record) Section(name string) (json.RawMessage, bool) {
	i := r.index(name)
	if i < 0 {
		return nil, false
	}
	return bytes.Clone(r.members[i].Value), true
}

// Sections returns the names of the record's sections in file order: every top-level key except the
// envelope (version, task_id, created_at, updated_at).
func (r *Record) Sections() []string {
	var out []string
	for _, m := range r.members {
		if !slices.Contains(envelope, m.Key) {
			out = append(out, m.Key)
		}
	}
	return out
}

func (r *Record) index(key string) int {
	return slices.IndexFunc(r.members, func(m jsonobj.Member) bool { return m.Key == key })
}

// ErrGateOnlySection is wrapped by SetSection when asked to write gate_result or gate_history:
// only the gate's own verdict may land there (SPEC §2.2), so an agent cannot forge a pass.
var ErrGateOnlySection = errors.New("written only by `geas gate`")

// unmarshalValue decodes raw into dst, refusing null: encoding/json would silently leave dst
// zero, and a record field that is present but null is malformed, not absent.
func unmarshalValue(raw json.RawMessage, dst any) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return errors.New("null is not allowed here")
	}
	return json.Unmarshal(raw, dst)
}

// objectFields decodes raw as an object with exact, unique keys. The typed views decode through it
// rather than through struct tags because encoding/json matches keys case-insensitively: the schema
// would check "confidence" while Go read "Confidence", and a record must mean one thing.
func objectFields(raw []byte) (map[string]json.RawMessage, error) {
	members, err := jsonobj.Decode(raw)
	if err != nil {
		return nil, err
	}
	m := make(map[string]json.RawMessage, len(members))
	for _, mb := range members {
		m[mb.Key] = mb.Value
	}
	return m, nil
}

// field decodes the value of key in fields into dst when present.
func field(fields map[string]json.RawMessage, key string, dst any) error {
	raw, ok := fields[key]
	if !ok {
		return nil
	}
	if err := unmarshalValue(raw, dst); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// UnmarshalJSON reads a self_check section with exact key matching.
func (s *SelfCheck) UnmarshalJSON(data []byte) error {
	f, err := objectFields(data)
	if err != nil {
		return err
	}
	var v SelfCheck
	if err := errors.Join(
		field(f, "confidence", &v.Confidence),
		field(f, "known_risks", &v.KnownRisks),
		field(f, "untested_paths", &v.UntestedPaths),
		field(f, "unverified_cases", &v.UnverifiedCases),
		field(f, "summary", &v.Summary),
		field(f, "possible_stubs", &v.PossibleStubs),
	); err != nil {
		return err
	}
	*s = v
	return nil
}

// UnmarshalJSON reads an implementation_contract section with exact key matching.
func (c *ImplementationContract) UnmarshalJSON(data []byte) error {
	f, err := objectFields(data)
	if err != nil {
		return err
	}
	var v ImplementationContract
	if err := errors.Join(field(f, "known_risks", &v.KnownRisks), field(f, "status", &v.Status)); err != nil {
		return err
	}
	*c = v
	return nil
}

// UnmarshalJSON reads an integration section with exact key matching.
func (in *Integration) UnmarshalJSON(data []byte) error {
	f, err := objectFields(data)
	if err != nil {
		return err
	}
	var v Integration
	if err := errors.Join(field(f, "status", &v.Status), field(f, "branch", &v.Branch), field(f, "commit", &v.Commit)); err != nil {
		return err
	}
	*in = v
	return nil
}

// stubLocationText is "path:line", optionally followed by ":column" (as compilers print it), which
// is ignored. The path is matched lazily so that a path containing ':' keeps it.
var stubLocationText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+?):([0-9]+)(?::[0-9]+)?$`) })

// UnmarshalJSON accepts both forms geas agents write: the string "path:line" (or just "path") and
// the object {"path": ..., "line": ...}. A line, when given, starts at 1.
func (l *StubLocation) UnmarshalJSON(data []byte) error {
	var v StubLocation
	if data = bytes.TrimSpace(data); len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		v.Path = s
		if m := stubLocationText().FindStringSubmatch(s); m != nil {
			n, err := strconv.Atoi(m[2])
			if err != nil || n < 1 {
				return fmt.Errorf("stub location %q: line must be a positive integer", s)
			}
			v.Path, v.Line = m[1], n
		}
	} else {
		f, err := objectFields(data)
		if err != nil {
			return fmt.Errorf("stub location: want \"path:line\" or {\"path\", \"line\"}: %w", err)
		}
		if err := errors.Join(field(f, "path", &v.Path), field(f, "line", &v.Line)); err != nil {
			return fmt.Errorf("stub location: %w", err)
		}
		if v.Line < 0 {
			return fmt.Errorf("stub location %s: line %d is negative", v.Path, v.Line)
		}
	}
	if v.Path == "" {
		return errors.New("stub location: empty path")
	}
	*l = v
	return nil
}

// MarshalJSON writes the object form, which needs no parsing to read back; line is omitted when 0.
func (l StubLocation) MarshalJSON() ([]byte, error) {
	members := []jsonobj.Member{{Key: "path", Value: jsonobj.String(l.Path)}}
	if l.Line != 0 {
		members = append(members, jsonobj.Member{Key: "line", Value: json.RawMessage(strconv.Itoa(l.Line))})
	}
	return jsonobj.Compact(members), nil
}

// UnmarshalJSON reads a history entry with exact key matching, keeping unknown keys in Extra.
func (e *HistoryEntry) UnmarshalJSON(data []byte) error {
	f, err := objectFields(data)
	if err != nil {
		return err
	}
	var v HistoryEntry
	if err := errors.Join(
		field(f, "kind", &v.Kind),
		field(f, "run_id", &v.RunID),
		field(f, "verdict", &v.Verdict),
		field(f, "retry_budget_before", &v.RetryBudgetBefore),
		field(f, "retry_budget_after", &v.RetryBudgetAfter),
		field(f, "head", &v.Head),
		field(f, "inputs_sha256", &v.InputsSHA256),
		field(f, "rules_sha256", &v.RulesSHA256),
		field(f, "started_at", &v.StartedAt),
		field(f, "prev_hash", &v.PrevHash),
		field(f, "hash", &v.Hash),
		field(f, "hmac", &v.HMAC),
	); err != nil {
		return err
	}
	// Raw values are kept compact so that an entry reads the same however the file was indented.
	if c, ok := f["causes"]; ok {
		v.Causes = compactJSON(c)
	}
	for k, raw := range f {
		if !slices.Contains(historyKeys, k) {
			if v.Extra == nil {
				v.Extra = map[string]json.RawMessage{}
			}
			v.Extra[k] = compactJSON(raw)
		}
	}
	*e = v
	return nil
}

// MarshalJSON writes the known keys in a fixed order (empty strings and nil values omitted, except
// the chain links prev_hash and hash; hmac follows them when set), then
// the Extra keys sorted, so the same entry always has the same bytes. Extra keys that shadow a
// known key are dropped: the typed field is the truth.
func (e HistoryEntry) MarshalJSON() ([]byte, error) {
	var members []jsonobj.Member
	str := func(k, v string) {
		if v != "" {
			members = append(members, jsonobj.Member{Key: k, Value: jsonobj.String(v)})
		}
	}
	num := func(k string, v *int) {
		if v != nil {
			members = append(members, jsonobj.Member{Key: k, Value: json.RawMessage(strconv.Itoa(*v))})
		}
	}
	str("kind", e.Kind)
	str("run_id", e.RunID)
	str("verdict", e.Verdict)
	if len(e.Causes) > 0 {
		c := bytes.TrimSpace(e.Causes)
		if !json.Valid(c) {
			return nil, errors.New("history entry: causes is not valid JSON")
		}
		members = append(members, jsonobj.Member{Key: "causes", Value: c})
	}
	num("retry_budget_before", e.RetryBudgetBefore)
	num("retry_budget_after", e.RetryBudgetAfter)
	str("head", e.Head)
	str("inputs_sha256", e.InputsSHA256)
	str("rules_sha256", e.RulesSHA256)
	str("started_at", e.StartedAt)
	// The chain links are always written, empty or not: the first entry's prev_hash is "", and an
	// entry without them could not be told from one whose links were cut.
	members = append(members, jsonobj.Member{Key: "prev_hash", Value: jsonobj.String(e.PrevHash)}, jsonobj.Member{Key: "hash", Value: jsonobj.String(e.Hash)})
	str("hmac", e.HMAC)
	keys := make([]string, 0, len(e.Extra))
	for k := range e.Extra {
		if !slices.Contains(historyKeys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := bytes.TrimSpace(e.Extra[k])
		if !json.Valid(v) {
			return nil, fmt.Errorf("history entry: %s is not valid JSON", k)
		}
		members = append(members, jsonobj.Member{Key: k, Value: v})
	}
	return jsonobj.Compact(members), nil
}

// compactJSON returns raw, which must be valid JSON, without insignificant white space.
func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return bytes.Clone(raw)
	}
	return b.Bytes()
}

// ReadSums returns the sha256 (hex) of record.json and of integration.json as Load read them, ""
// for a file that was absent, so that a caller can confirm that they did not change (SPEC §7.4)
// by reading their bytes again rather than parsing them. A record that was not loaded (New)
// returns "", "".
func (r *Record) ReadSums() (record, integration string) {
	return r.store.readSum, r.store.integSum
}

func sha256Hex(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}
