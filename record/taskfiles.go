package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geas-dev/geas/internal/jsonobj"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/schemas"
)

// The task's files beside record.json (SPEC §3).
const (
	// HistoryFile holds the gate history: one hash-chained entry a line, appended only by the gate.
	HistoryFile = "gate-history.jsonl"
	// IntegrationFile holds {status, branch, commit}, written by `geas task integrate`.
	IntegrationFile = "integration.json"
)

// MaxHistoryBytes is the largest gate-history.jsonl geas reads (SPEC §10).
// A policy may raise the history's limit (max_history_bytes) at most fourfold, so every reader
// accepts four times the default: the gate never writes a history it cannot read back.
const MaxHistoryBytes = 4 * DefaultMaxHistoryBytes

// maxIntegrationBytes bounds integration.json, which holds three short strings.
const maxIntegrationBytes = 64 << 10

// IntegrationStatuses are the values integration.json's status may take.
var IntegrationStatuses = []string{"merged", "conflict", "failed", "pending"}

// taskFiles is what a Record knows of its history and integration files.
type taskFiles struct {
	legacy     bool            // history or integration read from record.json's root (earlier layout)
	haveHist   bool            // gate-history.jsonl exists
	haveInteg  bool            // integration.json exists
	stored     int             // history entries already in gate-history.jsonl
	valid      int64           // bytes of its complete lines
	size       int64           // its size as read (valid, plus a torn last line)
	torn       bool            // its last line has no newline: a crash mid-append, ignored
	rewrite    bool            // ResetHistory: Write replaces the file whole
	integRaw   json.RawMessage // integration's JSON as read or set
	integDirty bool            // SetIntegration: Write writes integration.json
	// resultPending: gate_result was taken from the latest run's result.json, because
	// record.json still held the one before it (a run between its commit point and its record
	// write, or killed there); the next locked Write puts it in record.json.
	resultPending bool
	// readSum and integSum are the sha256 of record.json and integration.json as Load read them
	// ("" for a file that was absent): ReadSums.
	readSum, integSum string
	// replaceInteg: LoadToReplaceIntegration; badInteg is then why integration.json was not read.
	replaceInteg bool
	badInteg     error
}

// loadSiblings reads gate-history.jsonl and integration.json from dir. Each file, when present,
// replaces what the earlier layout kept at record.json's root.
func (r *Record) loadSiblings(src files, dir string) error {
	hist := path.Join(dir, HistoryFile)
	data, err := src.readOptional(hist, MaxHistoryBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("load %s: %w", hist, err)
	default:
		entries, valid, torn, err := parseHistory(hist, data)
		if err != nil {
			return err
		}
		r.history = entries
		r.store.haveHist, r.store.stored, r.store.valid, r.store.torn = true, len(entries), valid, torn
		r.store.size = int64(len(data))
	}
	integ := path.Join(dir, IntegrationFile)
	data, err = src.readOptional(integ, maxIntegrationBytes)
	if err == nil {
		r.store.integSum = sha256Hex(data)
		var in *Integration
		var raw json.RawMessage
		if in, raw, err = ParseIntegration(integ, data); err == nil {
			r.integration, r.store.integRaw, r.store.haveInteg = in, raw, true
		}
	} else {
		err = fmt.Errorf("load %s: %w", integ, err)
	}
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist):
	case r.store.replaceInteg:
		r.store.badInteg = err // geas task integrate replaces it
	default:
		return err
	}
	return r.adoptPendingResult(src, dir)
}

// adoptPendingResult takes gate_result from the latest gate run's result.json when record.json
// still holds exactly what it held before that run was recorded (the previous run's gate_result,
// or none) and the run's gate_result event is not logged yet: the run happened at its history entry (SPEC §7.3), and a reader must not see the
// moment between the append and the record write as a gate_result that does not match the chain.
// A result.json that does not name the entry's run, hash and verdict is not adopted, and any
// other mismatch is left as it is, for the history check to report.
func (r *Record) adoptPendingResult(src files, dir string) error {
	n := len(r.history)
	if n == 0 {
		return nil
	}
	last := r.history[n-1]
	if !last.IsGateRun() || !project.IsID(last.RunID) {
		return nil
	}
	before := ""
	for i := n - 2; i >= 0; i-- {
		if r.history[i].IsGateRun() {
			before = r.history[i].Hash
			break
		}
	}
	type named struct {
		RunID   string `json:"run_id"`
		Verdict string `json:"verdict"`
		Hash    string `json:"hash"`
	}
	var cur named
	if raw, ok := r.GateResult(); ok {
		if json.Unmarshal(raw, &cur) != nil || cur.Hash == last.Hash || before == "" || cur.Hash != before {
			return nil
		}
	} else if before != "" {
		return nil
	}
	// record.json is written before the run's events: once its gate_result event is logged, a
	// record.json without that gate_result was changed afterwards, which is for the history
	// check to report, not to repair.
	if parts := strings.Split(dir, "/"); len(parts) == 4 && parts[0] == "missions" && parts[2] == "tasks" {
		keys, err := TaskEventKeys(src.root, parts[1], parts[3])
		if err != nil || keys.Has(EventGateResult, last.Hash, "") {
			return nil
		}
	} else {
		return nil
	}
	raw, err := src.r.ReadLimited(ResultFile(dir, last.RunID), MaxBytes)
	if err != nil {
		return nil
	}
	var res named
	if json.Unmarshal(raw, &res) != nil || res.RunID != last.RunID || res.Hash != last.Hash || res.Verdict != last.Verdict {
		return nil
	}
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		return nil
	}
	saved := r.history
	if err := r.update(time.Now(), jsonobj.Member{Key: gateResult, Value: bytes.Clone(raw)}); err != nil {
		return nil // a result the record schema refuses is not adopted
	}
	r.history = saved
	r.store.resultPending = true
	return nil
}

// ResultPending reports whether gate_result was taken from the latest run's result.json and is
// not yet in record.json (see adoptPendingResult).
func (r *Record) ResultPending() bool { return r.store.resultPending }

// loadWithoutRecord is Load for a task whose record.json is missing: when its history or its
// integration file is there, the record is a new one carrying them (the history is still the
// task's, and a gate run appends to it rather than starting a chain over it); otherwise the
// error is notExist's.
func loadWithoutRecord(src files, name string, notExist error, replaceInteg bool) (*Record, error) {
	dir := path.Dir(name)
	_, herr := src.r.Lstat(path.Join(dir, HistoryFile))
	_, ierr := src.r.Lstat(path.Join(dir, IntegrationFile))
	if herr != nil && ierr != nil {
		return nil, fmt.Errorf("load record: %w", notExist)
	}
	r := New(path.Base(dir), time.Now())
	r.file = name
	r.store.replaceInteg = replaceInteg
	if err := r.loadSiblings(src, dir); err != nil {
		return nil, err
	}
	return r, nil
}

// parseHistory reads gate-history.jsonl: one entry a line, each ending with a newline. A last line
// without one is a crash mid-append: it is ignored (torn), and valid is the length of the
// complete lines, to which the next locked write truncates the file. Any other malformed line
// makes the history invalid.
func parseHistory(file string, data []byte) (entries []HistoryEntry, valid int64, torn bool, err error) {
	return parseHistoryLines(file, data)
}

// parseHistoryLines is parseHistory. A line the gate wrote takes fastEntry;
// any other takes the slow path below.
func parseHistoryLines(file string, data []byte) (entries []HistoryEntry, valid int64, torn bool, err error) {
	rest := data
	for n := 1; len(rest) > 0; n++ {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return entries, valid, true, nil
		}
		line := rest[:i]
		rest = rest[i+1:]
		if e, ok := fastEntry(line); ok {
			entries = append(entries, e)
			valid += int64(i) + 1
			continue
		}
		e, err := slowEntry(file, "/line "+strconv.Itoa(n), line)
		if err != nil {
			return nil, 0, false, err
		}
		entries = append(entries, e)
		valid += int64(i) + 1
	}
	return entries, valid, false, nil
}

// slowEntry reads one history line at pointer at of file through schemas.Decode, the key-case
// check and HistoryEntry.UnmarshalJSON, and checks it with checkEntry.
func slowEntry(file, at string, line []byte) (HistoryEntry, error) {
	doc, derr := schemas.Decode(file, line)
	if derr != nil {
		return HistoryEntry{}, invalidHistory(file, at, derr)
	}
	if _, ok := doc.(map[string]any); !ok {
		return HistoryEntry{}, invalidHistory(file, at, errors.New("a history line must be a JSON object"))
	}
	if p := schemas.FoldProblems(doc, historyShape); len(p) > 0 {
		return HistoryEntry{}, &schemas.ValidationError{File: file, Kind: schemas.Record, Problems: p}
	}
	var e HistoryEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return HistoryEntry{}, invalidHistory(file, at, err)
	}
	if err := checkEntry(e); err != nil {
		return HistoryEntry{}, invalidHistory(file, at, err)
	}
	return e, nil
}

// historyShape says which keys a history line holds (for the key-case check).
var historyShape = (&HistoryEntry{}).JSONShape()

// checkEntry refuses what no gate writes in an entry: a verdict outside the four, a negative
// budget. (The chain and the key say whether an entry is the gate's; this says it can be read.)
func checkEntry(e HistoryEntry) error {
	switch e.Verdict {
	case "", "pass", "fail", "block", "error":
	default:
		return fmt.Errorf("verdict %q is not one of pass, fail, block, error", e.Verdict)
	}
	for _, b := range []*int{e.RetryBudgetBefore, e.RetryBudgetAfter} {
		if b != nil && *b < 0 {
			return fmt.Errorf("retry budget %d is negative", *b)
		}
	}
	return nil
}

func invalidHistory(file, at string, err error) error {
	return &schemas.ValidationError{File: file, Kind: schemas.Record, Problems: []schemas.Problem{{Pointer: at, Message: err.Error()}}}
}

// ParseIntegration reads integration.json: an object with status (merged, conflict, failed or
// pending) and optional branch and commit strings, nothing else, keys exact. It returns the
// integration and its compact JSON.
func ParseIntegration(file string, data []byte) (*Integration, json.RawMessage, error) {
	doc, err := schemas.Decode(file, data)
	if err != nil {
		return nil, nil, err
	}
	if err := checkIntegration(file, doc, ""); err != nil {
		return nil, nil, err
	}
	var in Integration
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, nil, invalid(file, "", err)
	}
	return &in, compactJSON(data), nil
}

// checkIntegration validates a decoded integration object at ptr of file.
func checkIntegration(file string, v any, ptr string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return invalid(file, ptr, errors.New("integration must be an object {status, branch, commit}"))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch k {
		case "status", "branch", "commit":
			if _, ok := m[k].(string); !ok {
				return invalid(file, ptr+"/"+k, fmt.Errorf("%s must be a string", k))
			}
		default:
			return invalid(file, ptr+"/"+k, fmt.Errorf("unknown key %q: integration has only status, branch and commit", k))
		}
	}
	st, ok := m["status"].(string)
	if !ok {
		return invalid(file, ptr, errors.New("integration needs a status"))
	}
	if !slices.Contains(IntegrationStatuses, st) {
		return invalid(file, ptr+"/status", fmt.Errorf("status %q is not one of %v", st, IntegrationStatuses))
	}
	return nil
}

// IntegrationJSON returns integration.json's content (or the earlier layout's integration
// section) as compact JSON, for the inputs digest.
func (r *Record) IntegrationJSON() (json.RawMessage, bool) {
	if r.integration == nil || r.store.integRaw == nil {
		return nil, false
	}
	return bytes.Clone(r.store.integRaw), true
}

// Legacy reports whether the record was read in the earlier layout (gate_history or integration
// at its root), which the next Write migrates.
func (r *Record) Legacy() bool { return r.store.legacy }

// HistoryTorn reports whether gate-history.jsonl ended with a torn line (ignored).
func (r *Record) HistoryTorn() bool { return r.store.torn }

// LoadPath is Load for a record.json named by a plain file path, with its history and
// integration beside it: for tools and tests outside a project root.
func LoadPath(file string) (*Record, error) {
	root, err := os.OpenRoot(filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return Load(root, filepath.Base(file))
}

// Recorded reports whether the history entry with hash is in gate-history.jsonl as written (or
// read): whether a run reached its commit point.
func (r *Record) Recorded(hash string) bool {
	for _, e := range r.history[:min(r.store.stored, len(r.history))] {
		if e.Hash == hash {
			return true
		}
	}
	return false
}
