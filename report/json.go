package report

import (
	"encoding/json"
	"io"

	"github.com/geas-dev/geas/tiers"
)

// jsonFormat writes each document as indented JSON followed by a newline, with <, > and & as they
// are (what every other --format json output of geas prints).
type jsonFormat struct{}

// Gate writes the result document: one object for one run, an array for several.
func (jsonFormat) Gate(w io.Writer, results []*tiers.Result) error {
	if len(results) == 1 {
		return writeJSON(w, results[0])
	}
	return writeJSON(w, results)
}

// All writes the document of geas gate --all; no task is an empty array, not null.
func (jsonFormat) All(w, _ io.Writer, a *All) error {
	doc := *a
	if doc.Tasks == nil {
		doc.Tasks = []*AllTask{}
	}
	return writeJSON(w, doc)
}

// Verify writes the document of geas gate verify.
func (jsonFormat) Verify(w io.Writer, v *Verify) error {
	return writeJSON(w, v)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
