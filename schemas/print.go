package schemas

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Defs is the schema of shared definitions that the other schemas refer to
// ("_defs.schema.json#/$defs/..."). It describes no file of its own, so it is not one of Kinds (no
// file is validated against it), but it is printable: every $ref target must be (SPEC §9).
const Defs Kind = "_defs"

// Printable returns every embedded schema that geas schema prints: the kinds, then Defs.
func Printable() []Kind {
	return append(Kinds(), Defs)
}

// ParsePrintable is ParseKind that also knows Defs, as "_defs" or "defs" (with or without
// ".schema.json", as a $ref names it).
func ParsePrintable(name string) (Kind, bool) {
	switch strings.TrimSuffix(strings.TrimSuffix(name, ".json"), ".schema") {
	case string(Defs), "defs":
		return Defs, true
	}
	return ParseKind(name)
}

// RefTargets returns the schema files that the embedded schemas name in their $refs ("x.schema.json"
// of "x.schema.json#/$defs/y"), sorted, each once; a test checks that every one is Printable.
func RefTargets() ([]string, error) {
	var out []string
	for _, k := range Printable() {
		src, err := Source(k)
		if err != nil {
			return nil, err
		}
		var doc any
		if err := json.Unmarshal(src, &doc); err != nil {
			return nil, err
		}
		collectRefs(doc, &out)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func collectRefs(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for key, val := range v {
			if s, ok := val.(string); ok && key == "$ref" {
				if file, _, _ := strings.Cut(s, "#"); file != "" {
					*out = append(*out, file)
				}
				continue
			}
			collectRefs(val, out)
		}
	case []any:
		for _, val := range v {
			collectRefs(val, out)
		}
	}
}

// FormatVersion returns the format version a kind's files carry, the "const" of the schema's
// "version" property ("1.0" for the geas v1.0 files), or "" for a kind without one.
func FormatVersion(k Kind) string {
	src, err := Source(k)
	if err != nil {
		return ""
	}
	var doc struct {
		Properties struct {
			Version struct {
				Const string `json:"const"`
			} `json:"version"`
		} `json:"properties"`
	}
	if json.Unmarshal(src, &doc) != nil {
		return ""
	}
	return doc.Properties.Version.Const
}

// WriteDir writes every printable schema into dir (created when missing) as NAME.schema.json, the
// file name its "$id" gives, and returns the paths written. Each "$id" and "$ref" is relative, so
// the files resolve one another where they lie: an editor whose "$schema" names
// DIR/task-contract.schema.json binds it offline. A file already there is replaced.
func WriteDir(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write schemas: %w", err)
	}
	var out []string
	for _, k := range Printable() {
		src, err := Source(k)
		if err != nil {
			return out, err
		}
		p := filepath.Join(dir, string(k)+".schema.json")
		if err := os.WriteFile(p, src, 0o644); err != nil {
			return out, fmt.Errorf("write schema %s: %w", k, err)
		}
		out = append(out, p)
	}
	return out, nil
}
