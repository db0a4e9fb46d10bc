package evidence

import (
	"slices"
	"strings"
)

// Declared returns the files the evidence says the work changed: files_changed (geas v1.0) and
// artifact_refs (geas v1.4.0), in that order, each name once.
func (e *Evidence) Declared() []string {
	if len(e.ArtifactRefs) == 0 {
		return e.FilesChanged
	}
	out := slices.Clone(e.FilesChanged)
	for _, f := range e.ArtifactRefs {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// Revision is one revision an evidence file says it is about, with the field that names it.
type Revision struct {
	Field string // "commit" (geas v1.0) or "revision_ref" (geas v1.4.0)
	Ref   string // as written
}

// Revisions returns the revisions the evidence names, commit first, leaving out a field that is
// absent or blank. A file that names both gets both: each must be the head.
func (e *Evidence) Revisions() []Revision {
	var out []Revision
	if strings.TrimSpace(e.Commit) != "" {
		out = append(out, Revision{"commit", e.Commit})
	}
	if strings.TrimSpace(e.RevisionRef) != "" {
		out = append(out, Revision{"revision_ref", e.RevisionRef})
	}
	return out
}
