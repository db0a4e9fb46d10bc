package evidence

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geas-dev/geas/vocab"
)

// FuzzEvidenceLoad: Parse never panics; anything it accepts has the fields every role needs and
// scores inside 1..5.
func FuzzEvidenceLoad(f *testing.F) {
	for _, dir := range []string{
		filepath.Join("..", "testdata", "evidence"),
		filepath.Join("..", "testdata", "schemas", "evidence"),
	} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{}`))
	// The crasher that found the case-folding hole: encoding/json read "ruBriC_sCores" as
	// rubric_scores, which the schema never checked, so a score of 9 was accepted. It is also kept
	// in testdata/fuzz/FuzzEvidenceLoad.
	f.Add([]byte(`{"agent":"design-authority","task_id":"t1","role":"reviewer","summary":"s","ruBriC_sCores":[{"dimension":"core_interaction","score":9}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse("ev.json", data)
		if err != nil {
			if e != nil {
				t.Fatal("rejected evidence must not be returned")
			}
			return
		}
		if e.Agent == "" || e.TaskID == "" || e.Summary == "" {
			t.Fatalf("accepted evidence without agent, task or summary: %+v", e)
		}
		switch e.Role {
		case vocab.Implementer, vocab.Reviewer, vocab.Tester, vocab.Authority:
		default:
			t.Fatalf("accepted unknown role %q", e.Role)
		}
		// In either geas version, a review, test or authority file without a verdict approves
		// nothing: it is not accepted.
		if e.Role != vocab.Implementer && e.Verdict == "" {
			t.Fatalf("accepted a %s file without a verdict", e.Role)
		}
		// Every revision a file names is one the stale check judges: none blank.
		for _, r := range e.Revisions() {
			if strings.TrimSpace(r.Ref) == "" {
				t.Fatalf("a blank %s counts as a revision", r.Field)
			}
		}
		for _, s := range e.RubricScores {
			if s.Score < 1 || s.Score > 5 {
				t.Fatalf("accepted score %v outside 1..5", s.Score)
			}
		}
	})
}
