// Package schemas owns the JSON Schemas (draft 2020-12) of every file geas reads or writes: the task
// contract, record.json, evidence, the debt register, decision records, events and the gate policy.
// The schemas are embedded in the binary and compiled once a process, each on first use, by one
// compiler (compile.go); nothing is ever loaded from the network or the disk at run time.
package schemas

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Kind names one schema.
type Kind string

// The schema kinds. The value is the schema's file name without ".schema.json".
const (
	Contract     Kind = "task-contract"
	Record       Kind = "record"
	Evidence     Kind = "evidence"
	DebtRegister Kind = "debt-register"
	Decision     Kind = "decision"
	Event        Kind = "event"
	GatePolicy   Kind = "gate-policy"
)

// kinds are the schema kinds in the order of Kinds.
var kinds = [...]Kind{Contract, Record, Evidence, DebtRegister, Decision, Event, GatePolicy}

// Kinds returns every schema kind, in a stable order.
func Kinds() []Kind { return slices.Clone(kinds[:]) }

// ParseKind maps a kind name (as printed by Kinds, with or without ".schema.json", plus the aliases
// "contract" and "debt") to its Kind.
func ParseKind(name string) (Kind, bool) {
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".json"), ".schema")
	switch name {
	case "contract", "task_contract":
		return Contract, true
	case "debt", "debt_register":
		return DebtRegister, true
	case "decision_record", "decision-record":
		return Decision, true
	case "policy", "gate_policy":
		return GatePolicy, true
	}
	k := Kind(name)
	if slices.Contains(Kinds(), k) {
		return k, true
	}
	return "", false
}

// KindForFile guesses the kind of a file from its path, the way geas lays files out:
// contract.json, record.json, evidence/*.json, debt-register.json, decisions/**.json,
// gate-policy.json, and events (one event object per file).
func KindForFile(p string) (Kind, bool) {
	p = path.Clean(strings.ReplaceAll(p, "\\", "/"))
	base := path.Base(p)
	dir := path.Base(path.Dir(p))
	switch {
	case base == "contract.json" || strings.HasSuffix(base, ".contract.json"):
		return Contract, true
	case base == "record.json" || strings.HasSuffix(base, ".record.json"):
		return Record, true
	case base == "debt-register.json":
		return DebtRegister, true
	case base == "gate-policy.json" || base == "gate-policy.example.json":
		return GatePolicy, true
	case dir == "evidence" || strings.HasSuffix(base, ".evidence.json"):
		return Evidence, true
	case strings.Contains(p, "decisions/") || strings.HasSuffix(base, ".decision.json"):
		return Decision, true
	case strings.HasSuffix(base, ".event.json"):
		return Event, true
	}
	if k, ok := ParseKind(base); ok {
		return k, true
	}
	return "", false
}

//go:embed *.schema.json
var files embed.FS

// Source returns the text of a schema.
func Source(k Kind) ([]byte, error) {
	b, err := files.ReadFile(string(k) + ".schema.json")
	if err != nil {
		return nil, fmt.Errorf("unknown schema %q", k)
	}
	return b, nil
}

// Problem is one reason a document does not match its schema.
type Problem struct {
	Pointer string // JSON pointer of the bad field ("" is the document itself)
	Message string
}

// ValidationError reports why a file does not match its schema. Its Error text has one line per
// problem, each naming the file and the JSON pointer of the bad field.
type ValidationError struct {
	File     string
	Kind     Kind
	Problems []Problem
}

func (e *ValidationError) Error() string {
	lines := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		ptr := p.Pointer
		if ptr == "" {
			ptr = "/"
		}
		lines = append(lines, fmt.Sprintf("%s: %s: %s", e.File, ptr, p.Message))
	}
	return strings.Join(lines, "\n")
}

// SyntaxError reports a file that is not a single well-formed JSON value.
type SyntaxError struct {
	File   string
	Offset int64 // byte offset of the problem, when known
	Err    error
}

func (e *SyntaxError) Error() string {
	if e.Offset > 0 {
		return fmt.Sprintf("%s: invalid JSON at byte %d: %v", e.File, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: invalid JSON: %v", e.File, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// Decode parses data as exactly one JSON value, with numbers kept as json.Number, the form the
// validator expects. Trailing data and duplicate object keys are syntax errors: a document that
// two parsers could read differently is not evidence. It reads data once (parse); a document it
// refuses is read again by decodeStd, which says why.
func Decode(file string, data []byte) (any, error) {
	if v, _, ok := parse(data, nil); ok {
		return v, nil
	}
	return decodeStd(file, data)
}

// decodeStd is Decode through encoding/json: the value, then a second token pass for repeated
// keys. It is the reference parse accepts exactly the documents of, and the words of every refusal.
func decodeStd(file string, data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &SyntaxError{File: file, Offset: se.Offset, Err: err}
		}
		if errors.Is(err, io.EOF) {
			return nil, &SyntaxError{File: file, Err: errors.New("empty document")}
		}
		return nil, &SyntaxError{File: file, Err: err}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &SyntaxError{File: file, Offset: dec.InputOffset(), Err: errors.New("data after the JSON value")}
	}
	// encoding/json silently turns invalid UTF-8 into U+FFFD: a file whose bytes say one thing
	// and whose decoded text another is not evidence either (RFC 8259 §8.1 requires UTF-8).
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, n := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		return nil, &SyntaxError{File: file, Offset: int64(off), Err: errors.New("invalid UTF-8")}
	}
	if ptr, key, ok := DuplicateKey(data); ok {
		return nil, &SyntaxError{File: file, Err: fmt.Errorf("duplicate key %q in object %s", key, orRoot(ptr))}
	}
	return v, nil
}

func orRoot(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

// DuplicateKey walks an already well-formed document and reports the first object that repeats a
// key: the object's JSON pointer and the key. Parsers disagree on which of two equal keys counts,
// so a document with one means different things to different readers.
func DuplicateKey(data []byte) (ptr, key string, found bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var walk func(at string) bool
	walk = func(at string) bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return false
		}
		if d == '{' {
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return false
				}
				k, _ := kt.(string)
				if seen[k] {
					ptr, key, found = at, k, true
					return true
				}
				seen[k] = true
				if walk(at + "/" + escapePointer(k)) {
					return true
				}
			}
		} else {
			for i := 0; dec.More(); i++ {
				if walk(fmt.Sprintf("%s/%d", at, i)) {
					return true
				}
			}
		}
		_, _ = dec.Token() // the closing delimiter
		return false
	}
	walk("")
	return ptr, key, found
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// Validate decodes data and checks it against the schema of kind k. file names the document in
// errors. It returns a *SyntaxError for malformed JSON and a *ValidationError for a schema mismatch.
func Validate(k Kind, file string, data []byte) error {
	v, err := Decode(file, data)
	if err != nil {
		return err
	}
	return ValidateValue(k, file, v)
}

// ValidateValue checks an already decoded value (as returned by Decode, or built from maps, slices,
// strings, bools, json.Number and float64) against the schema of kind k.
func ValidateValue(k Kind, file string, v any) error {
	s, err := compiled(k)
	if err != nil {
		return err
	}
	err = s.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return &ValidationError{File: file, Kind: k, Problems: problems(ve, v)}
	}
	if err != nil {
		return fmt.Errorf("%s: validate against %s schema: %w", file, k, err)
	}
	return nil
}

// problems flattens the validator's error tree to its leaves, one problem per leaf, ordered by
// pointer (array indexes in numeric order). Unknown and missing fields are reported at the field's
// own pointer, and messages quote the value found in doc where that helps.
func problems(ve *jsonschema.ValidationError, doc any) []Problem {
	var out []Problem
	seen := map[Problem]bool{}
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		for _, p := range leafProblems(e, doc) {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return comparePointers(out[i].Pointer, out[j].Pointer) < 0 })
	return out
}

// friendlyPatterns replaces "does not match pattern" for the shared definitions whose pattern says
// little to a reader. Keys are keyword locations relative to the schema base URL; %s is the value.
var friendlyPatterns = map[string]string{
	"_defs.schema.json#/$defs/duration/pattern":        `%s is not a Go duration such as "90s", "10m" or "1h30m"`,
	"_defs.schema.json#/$defs/isoUtcTimestamp/pattern": `%s is not a UTC timestamp of the form 2026-04-01T09:00:00Z`,
	"_defs.schema.json#/$defs/id/pattern":              `%s is not an id (letters, digits, "_" and "-" only)`,
	"_defs.schema.json#/$defs/command/pattern":         `%s is blank: a command would run nothing`,
}

func leafProblems(e *jsonschema.ValidationError, doc any) []Problem {
	at := normalizePointer(e.InstanceLocation)
	msg := e.Message
	const extra, missing = "additionalProperties ", "missing properties: "
	switch {
	case strings.HasPrefix(msg, extra) && strings.HasSuffix(msg, " not allowed"):
		var ps []Problem
		for _, n := range quotedNames(strings.TrimSuffix(strings.TrimPrefix(msg, extra), " not allowed")) {
			m := fmt.Sprintf("unknown field %q (not in the schema)", n)
			if at == "" && n != SchemaKey && strings.EqualFold(strings.TrimSpace(n), SchemaKey) {
				m = fmt.Sprintf("unknown field %q (not in the schema; a file names its schema with %q exactly)", n, SchemaKey)
			}
			ps = append(ps, Problem{Pointer: at + "/" + escapePointer(n), Message: m})
		}
		return ps
	case strings.HasPrefix(msg, missing):
		var ps []Problem
		for _, n := range quotedNames(strings.TrimPrefix(msg, missing)) {
			ps = append(ps, Problem{
				Pointer: at + "/" + escapePointer(n),
				Message: fmt.Sprintf("required field %q is missing", n),
			})
		}
		return ps
	}
	keyword := strings.TrimPrefix(e.AbsoluteKeywordLocation, baseURL)
	found := foundValue(doc, at)
	if f, ok := friendlyPatterns[keyword]; ok {
		return []Problem{{Pointer: at, Message: fmt.Sprintf(f, found)}}
	}
	switch keyword[strings.LastIndex(keyword, "/")+1:] {
	case "pattern":
		msg = fmt.Sprintf("%s does not match the pattern %s", found, strings.TrimPrefix(msg, "does not match pattern "))
	case "enum", "const":
		msg = fmt.Sprintf("%s, found %s", msg, found)
	case "minLength":
		if msg == "length must be >= 1, but got 0" {
			msg = "must not be empty"
		}
	case "minItems":
		if strings.HasPrefix(msg, "minimum 1 items required") {
			msg = "must have at least one item"
		}
	}
	return []Problem{{Pointer: at, Message: msg}}
}

// quotedNames parses the validator's list of single-quoted property names ('a', 'b\'c').
func quotedNames(list string) []string {
	var names []string
	for len(list) > 0 {
		if list[0] != '\'' {
			list = list[1:]
			continue
		}
		end := 1
		for end < len(list) && list[end] != '\'' {
			if list[end] == '\\' {
				end++
			}
			end++
		}
		body := list[1:min(end, len(list))]
		list = list[min(end+1, len(list)):]
		// The validator wrote the name with %q, then unescaped '"' and escaped '\''.
		body = strings.ReplaceAll(body, `\'`, `'`)
		body = strings.ReplaceAll(body, `"`, `\"`)
		if n, err := strconv.Unquote(`"` + body + `"`); err == nil {
			names = append(names, n)
		} else {
			names = append(names, body)
		}
	}
	sort.Strings(names)
	return names
}

// normalizePointer turns the validator's instance location, whose tokens are URL-path-escaped,
// into a plain RFC 6901 JSON pointer.
func normalizePointer(loc string) string {
	if loc == "" {
		return ""
	}
	tokens := strings.Split(loc, "/")
	for i, t := range tokens {
		if u, err := url.PathUnescape(t); err == nil {
			tokens[i] = u
		}
	}
	return strings.Join(tokens, "/")
}

// foundValue renders the value at ptr in doc for a message, shortened if long.
func foundValue(doc any, ptr string) string {
	v := doc
	if ptr != "" {
		for _, t := range strings.Split(ptr, "/")[1:] {
			t = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
			switch c := v.(type) {
			case map[string]any:
				v = c[t]
			case []any:
				i, err := strconv.Atoi(t)
				if err != nil || i < 0 || i >= len(c) {
					return "the value"
				}
				v = c[i]
			default:
				return "the value"
			}
		}
	}
	const limit = 80
	if str, ok := v.(string); ok && utf8.RuneCountInString(str) > limit {
		v = string([]rune(str)[:limit]) + "..."
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "the value"
	}
	s := strings.TrimSuffix(b.String(), "\n")
	if r := []rune(s); len(r) > limit+5 {
		return string(r[:limit]) + "..."
	}
	return s
}

// comparePointers orders JSON pointers token by token, numeric tokens by value.
func comparePointers(a, b string) int {
	ta, tb := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(ta) && i < len(tb); i++ {
		if ta[i] == tb[i] {
			continue
		}
		na, ea := strconv.Atoi(ta[i])
		nb, eb := strconv.Atoi(tb[i])
		if ea == nil && eb == nil {
			return cmp.Compare(na, nb)
		}
		return strings.Compare(ta[i], tb[i])
	}
	return len(ta) - len(tb)
}
