// Package jsonobj owns the ordered JSON object codec of geas's own files: an object read as its
// members in file order with each value's original bytes, a member set in place, and the object
// written back, so a rewrite of a record or a contract changes exactly the members it sets. It also
// holds String, the one JSON string encoder without HTML escaping.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Member is one key of a JSON object, with its value's original bytes.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Decode reads data as one JSON object and returns its members in file order. Duplicate keys
// are refused: two readers could pick different values, and a record must mean one thing.
func Decode(data []byte) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var out []Member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("invalid JSON: object key %v is not a string", tok)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("invalid JSON in %q: %w", key, err)
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		out = append(out, Member{Key: key, Value: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("invalid JSON: data after the object")
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("invalid JSON after the object: %w", err)
	}
	return out, nil
}

// Encode writes members as a JSON object indented with two spaces, with a trailing newline.
func Encode(members []Member) ([]byte, error) {
	var out bytes.Buffer
	if err := json.Indent(&out, Compact(members), "", "  "); err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// Set replaces key's value in place, or appends it when absent.
func Set(members []Member, key string, value json.RawMessage) []Member {
	for i := range members {
		if members[i].Key == key {
			members[i].Value = value
			return members
		}
	}
	return append(members, Member{Key: key, Value: value})
}

// String encodes s as a JSON string without HTML escaping, so keys and values stay readable.
func String(s string) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Compact writes members as a compact JSON object; every value must already be valid JSON.
func Compact(members []Member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(String(m.Key))
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// DecodeMap decodes a JSON object keeping numbers as written (json.Number).
func DecodeMap(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}
