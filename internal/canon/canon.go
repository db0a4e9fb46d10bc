// Package canon is the one canonical JSON form geas digests and signs: RFC 8785 (JSON
// Canonicalization Scheme), so that any language can recompute a hash the gate wrote. It wraps
// github.com/gowebpki/jcs, a small, well-kept implementation of the RFC. AppendString and
// AppendValue (fast.go) write the same form directly for the values a history entry is made of,
// and say when a value is outside them.
package canon

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Bytes returns the RFC 8785 form of raw, which must be one valid JSON value.
func Bytes(raw []byte) ([]byte, error) {
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return out, nil
}

// Marshal encodes v with encoding/json and returns its RFC 8785 form.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return Bytes(raw)
}

// SHA256 is the hex SHA-256 of v's RFC 8785 form.
func SHA256(v any) (string, error) {
	b, err := Marshal(v)
	if err != nil {
		return "", err
	}
	return SumHex(b), nil
}

// SumHex is the hex SHA-256 of b as it is (not put in canonical form): the digest of a file's
// bytes, the form every other digest geas writes or compares takes.
func SumHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Short is the first 12 characters of a digest or a commit hash, as messages show them.
func Short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
