// Package report owns the output formats of the gate's commands: text for people, json for
// programs, junit for CI test reports, github for GitHub Actions annotations and job summaries,
// and sarif for code scanning. Each format is one Renderer in a file of its own (text.go,
// json.go, junit.go, github.go, sarif.go), and
// writes the three documents the commands print: the results of geas gate, the outcome of
// geas gate --all (all.go) and the outcome of geas gate verify (verify.go). A renderer only
// writes: every document is decided and built by the gate, and nothing here reads a file, runs a
// check or picks an exit code.
package report

import (
	"io"

	"github.com/geas-dev/geas/tiers"
)

// The output formats, by the names --format takes.
const (
	Text   = "text"
	JSON   = "json"
	JUnit  = "junit"
	GitHub = "github"
	SARIF  = "sarif"
)

// Renderer writes the documents of the gate's commands in one output format.
type Renderer interface {
	// Gate writes the results of geas gate, one or more runs.
	Gate(w io.Writer, results []*tiers.Result) error
	// All writes the outcome of geas gate --all. diag receives the lines the format's document
	// cannot hold (junit: stdout is one XML document, so the tasks that were not gated and the
	// overall line go there); the other formats write nothing to it.
	All(w, diag io.Writer, a *All) error
	// Verify writes the outcome of geas gate verify.
	Verify(w io.Writer, v *Verify) error
}

var renderers = map[string]Renderer{
	Text:   textFormat{},
	JSON:   jsonFormat{},
	JUnit:  junitFormat{},
	GitHub: githubFormat{},
	SARIF:  sarifFormat{},
}

// For returns the renderer of the named format, or nil when there is no such format.
func For(format string) Renderer {
	return renderers[format]
}
