package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/geas-dev/geas/schemas"
)

// InputError is a mistake in what the caller asked for rather than in the project's files: the
// commands answer it as a usage error (exit 64).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// PayloadObject decodes a payload that must be one JSON object, keeping its values raw.
func PayloadObject(name string, b []byte) (map[string]json.RawMessage, error) {
	// One well-formed UTF-8 value without duplicate keys: a map would silently keep the last of two.
	if _, err := schemas.Decode(name, b); err != nil {
		return nil, fmt.Errorf("%s: payload must be a JSON object: %w", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil || obj == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, fmt.Errorf("%s: payload must be a JSON object: %v", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: data after the JSON object", name)
	}
	return obj, nil
}

// marshalOrdered writes obj as indented JSON with the keys of first leading, then the rest sorted.
func marshalOrdered(obj map[string]json.RawMessage, first []string) ([]byte, error) {
	keys := make([]string, 0, len(obj))
	for _, k := range first {
		if _, ok := obj[k]; ok {
			keys = append(keys, k)
		}
	}
	rest := make([]string, 0, len(obj))
	for k := range obj {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	keys = append(keys, rest...)
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, k := range keys {
		kb, _ := json.Marshal(k)
		var vb bytes.Buffer
		if err := json.Indent(&vb, obj[k], "  ", "  "); err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
		fmt.Fprintf(&buf, "  %s: %s", kb, vb.Bytes())
		if i < len(keys)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}
