// Package evidence owns what agents wrote about a task: the evidence files under
// tasks/{tid}/evidence/, which agent type each belongs to, and (later) the git facts the gate reads.
// It is the only user of go-git.
package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/schemas"
)

// Roles of an evidence file.
const (
	Implementer = "implementer"
	Reviewer    = "reviewer"
	Tester      = "tester"
	Authority   = "authority"
)

// DefaultMaxBytes is the size above which an evidence file is refused before it is parsed.
const DefaultMaxBytes = 16 << 20

// TotalLimit is how many bytes the evidence files of one task may hold together when one file may
// hold maxBytes: four files' worth, 64 MiB by default (SPEC §10).
func TotalLimit(maxBytes int64) int64 { return 4 * maxBytes }

// Evidence is one parsed evidence file.
type Evidence struct {
	Name string `json:"-"` // file name inside the evidence directory, e.g. "qa-engineer.json"

	Version         string             `json:"version"`
	Agent           string             `json:"agent"`
	TaskID          string             `json:"task_id"`
	Role            string             `json:"role"`
	Summary         string             `json:"summary"`
	Verdict         string             `json:"verdict,omitempty"`
	Concerns        []string           `json:"concerns,omitempty"`
	Rationale       string             `json:"rationale,omitempty"`
	FilesChanged    []string           `json:"files_changed,omitempty"`
	Commit          string             `json:"commit,omitempty"`
	ProviderID      string             `json:"provider_id,omitempty"`
	CriteriaResults []CriterionResult  `json:"criteria_results,omitempty"`
	RubricScores    []RubricScore      `json:"rubric_scores,omitempty"`
	RiskHandling    []RiskHandling     `json:"risk_handling,omitempty"`
	Judgments       []Judgment         `json:"judgments,omitempty"`
	Metrics         map[string]float64 `json:"metrics,omitempty"`

	// SHA256 is the hex digest of the file's bytes, for the gate's inputs digest.
	SHA256 string `json:"-"`
}

// CriterionResult is an agent's claim about one acceptance criterion.
type CriterionResult struct {
	ID        string `json:"id,omitempty"`
	Criterion string `json:"criterion"`
	Passed    bool   `json:"passed"`
	Details   string `json:"details,omitempty"`
}

// RubricScore is an evaluator's score for one rubric dimension, 1..5.
type RubricScore struct {
	Dimension string  `json:"dimension"`
	Score     float64 `json:"score"`
	Rationale string  `json:"rationale,omitempty"`
}

// RiskHandling says how a known risk was handled: mitigated, accepted or deferred.
type RiskHandling struct {
	Risk      string `json:"risk"`
	Status    string `json:"status"`
	Evidence  string `json:"evidence,omitempty"`
	Rationale string `json:"rationale,omitempty"`
	DebtID    string `json:"debt_id,omitempty"`
}

// Judgment is one model verdict on a judge check, with its provenance.
type Judgment struct {
	Check      string   `json:"check"`
	Passed     *bool    `json:"passed,omitempty"`
	Score      *float64 `json:"score,omitempty"`
	Standard   string   `json:"standard,omitempty"`
	Evidence   string   `json:"evidence,omitempty"`
	ProviderID string   `json:"provider_id,omitempty"`
}

// Parse validates data against the evidence schema and decodes it.
func Parse(name string, data []byte) (*Evidence, error) {
	var e Evidence
	// Exactly as the schema validated it: "ROLE" next to "role", or "Passed" next to "passed",
	// makes the file invalid instead of being read case-insensitively (SPEC §2 invariant 8).
	if err := schemas.DecodeExact(schemas.Evidence, name, data, &e); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	e.SHA256 = hex.EncodeToString(sum[:])
	return &e, nil
}

// FileError is an evidence file that could not be read or is invalid.
type FileError struct {
	Name string // path relative to the root it was read from
	Err  error
}

func (e *FileError) Error() string {
	msg := e.Err.Error()
	// Schema and syntax errors already name the file.
	if strings.HasPrefix(msg, e.Name+":") {
		return msg
	}
	return e.Name + ": " + msg
}

func (e *FileError) Unwrap() error { return e.Err }

// Load reads one evidence file through root, refusing it by size before parsing when it is larger
// than maxBytes (DefaultMaxBytes when 0). A symlink that leads outside root is refused by os.Root.
func Load(root *os.Root, name string, maxBytes int64) (*Evidence, error) {
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	data, err := project.ReadLimited(root, name, maxBytes)
	if err != nil {
		return nil, &FileError{Name: name, Err: err}
	}
	e, err := Parse(name, data)
	if err != nil {
		return nil, &FileError{Name: name, Err: err}
	}
	e.Name = name[strings.LastIndex(name, "/")+1:]
	return e, nil
}

// LoadAll reads every *.json file of dir (relative to root), in name order. Valid files are returned
// in ok; each unreadable or invalid file is one *FileError in bad. A missing directory holds no
// evidence; err is set only when the directory exists but cannot be listed. The files together are
// bounded too (SPEC §2.9, §10: 64 MiB with the default per-file limit, four times the per-file
// limit in general): a file that would take the total past it is not read, and is a *FileError.
func LoadAll(root *os.Root, dir string, maxBytes int64) (ok []*Evidence, bad []*FileError, err error) {
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	total, used := TotalLimit(maxBytes), int64(0)
	f, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open evidence directory %s: %w", dir, err)
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("list evidence directory %s: %w", dir, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, ent := range entries {
		if !strings.HasSuffix(ent.Name(), ".json") || strings.HasPrefix(ent.Name(), ".") {
			continue
		}
		name := dir + "/" + ent.Name()
		if fi, err := root.Stat(name); err == nil && fi.Mode().IsRegular() && fi.Size() <= maxBytes {
			if used+fi.Size() > total {
				bad = append(bad, &FileError{Name: name, Err: fmt.Errorf("its %d bytes would take the task's evidence past %d bytes in total: not read", fi.Size(), total)})
				continue
			}
			used += fi.Size()
		}
		e, err := Load(root, name, maxBytes)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				fe = &FileError{Name: dir + "/" + ent.Name(), Err: err}
			}
			bad = append(bad, fe)
			continue
		}
		ok = append(ok, e)
	}
	return ok, bad, nil
}

// GeasAgentTypes are the agent types of geas v1.0.
var GeasAgentTypes = []string{
	"orchestration-authority", "product-authority", "design-authority", "challenger",
	"software-engineer", "qa-engineer", "security-engineer", "platform-engineer",
	"technical-writer", "literature-analyst", "research-analyst", "methodology-reviewer",
	"research-integrity-reviewer", "research-engineer", "research-writer",
}

// AgentType returns the agent type of an evidence file's agent field: the longest known type that
// equals it or prefixes it followed by "-" ("design-authority-review" is design-authority). It
// returns "" when no known type fits.
func AgentType(agent string, known []string) string {
	best := ""
	for _, k := range known {
		if (agent == k || strings.HasPrefix(agent, k+"-")) && len(k) > len(best) {
			best = k
		}
	}
	return best
}

// KnownTypes is GeasAgentTypes plus extra (the types a contract names), without duplicates.
func KnownTypes(extra ...string) []string {
	out := slices.Clone(GeasAgentTypes)
	for _, t := range extra {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
