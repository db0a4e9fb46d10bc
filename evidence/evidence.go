// Package evidence owns what agents wrote about a task: the evidence files under
// tasks/{tid}/evidence/ (parsed, size-bounded, schema-checked), their roles, and which agent type
// each belongs to. The git facts the gate reads are internal/git's.
package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/schemas"
	"github.com/geas-dev/geas/vocab"
)

// DefaultMaxBytes is the size above which an evidence file is refused before it is parsed.
const DefaultMaxBytes = 16 << 20

// DefaultMaxTotalBytes bounds all evidence files of a task together (SPEC §10): a task's evidence
// over it is refused before any of it is read, so forty files just under the per-file limit
// cannot take the gate's memory to a gigabyte.
const DefaultMaxTotalBytes = 64 << 20

// Evidence is one parsed evidence file.
type Evidence struct {
	Name string `json:"-"` // file name inside the evidence directory, e.g. "qa-engineer.json"

	Version      string     `json:"version"`
	Agent        string     `json:"agent"`
	TaskID       string     `json:"task_id"`
	Role         vocab.Role `json:"role"`
	Summary      string     `json:"summary"`
	Verdict      string     `json:"verdict,omitempty"`
	Concerns     []string   `json:"concerns,omitempty"`
	Rationale    string     `json:"rationale,omitempty"`
	FilesChanged []string   `json:"files_changed,omitempty"`
	Commit       string     `json:"commit,omitempty"`
	// ArtifactRefs and RevisionRef are geas v1.4.0's names for what files_changed and commit say
	// in v1.0: the gate reads either pair in a file of either version (Declared, Revisions).
	ArtifactRefs    []string           `json:"artifact_refs,omitempty"`
	RevisionRef     string             `json:"revision_ref,omitempty"`
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

// evidenceShape is the shape of *Evidence, computed once.
var evidenceShape = schemas.ShapeFor[*Evidence]()

// Parse validates data against the evidence schema and decodes it.
func Parse(name string, data []byte) (*Evidence, error) {
	var e Evidence
	// Exactly as the schema validated it: "ROLE" next to "role", or "Passed" next to "passed",
	// makes the file invalid instead of being read case-insensitively (SPEC §2 invariant 8).
	if err := schemas.DecodeExactAs(schemas.Evidence, name, data, &e, evidenceShape()); err != nil {
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
	e, _, err := load(fsutil.RootReader(root), name, maxBytes)
	return e, err
}

// load is Load that also returns how many bytes it read.
func load(root fsutil.Reader, name string, maxBytes int64) (*Evidence, int64, error) {
	return loadKnown(root, name, maxBytes, nil)
}

// loadKnown is load answering known[base name] itself when the file holds the bytes it was
// parsed from (its SHA256): Parse is a function of the bytes, and its name only names errors,
// which a file that parsed has none of.
func loadKnown(root fsutil.Reader, name string, maxBytes int64, known map[string]*Evidence) (*Evidence, int64, error) {
	data, err := root.ReadLimited(name, maxBytes)
	if err != nil {
		return nil, 0, &FileError{Name: name, Err: err}
	}
	if k := known[name[strings.LastIndex(name, "/")+1:]]; k != nil {
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) == k.SHA256 {
			return k, int64(len(data)), nil
		}
	}
	e, err := Parse(name, data)
	if err != nil {
		return nil, int64(len(data)), &FileError{Name: name, Err: err}
	}
	e.Name = name[strings.LastIndex(name, "/")+1:]
	return e, int64(len(data)), nil
}

// LoadAll reads every *.json file of dir (relative to root), in name order. Valid files are returned
// in ok; each unreadable or invalid file is one *FileError in bad. A missing directory holds no
// evidence; err is set only when the directory exists but cannot be listed. All files together
// are bounded by DefaultMaxTotalBytes (see LoadAllBounded).
func LoadAll(root *os.Root, dir string, maxBytes int64) (ok []*Evidence, bad []*FileError, err error) {
	return LoadAllBounded(root, dir, maxBytes, DefaultMaxTotalBytes)
}

// LoadAllBounded is LoadAll with a bound on all files together: maxTotal bytes (DefaultMaxTotalBytes
// when 0). The sizes are taken from the directory before anything is read; when the files within
// the per-file limit add up to more than maxTotal, no file is read and the whole directory is one
// *FileError naming the total, the limit and the largest files (a file over the per-file limit is
// refused on its own, as by Load, and does not count). A file that grows after that is read only up to what the total has
// left, so the bytes held never exceed maxTotal whatever the files do meanwhile.
func LoadAllBounded(root *os.Root, dir string, maxBytes, maxTotal int64) (ok []*Evidence, bad []*FileError, err error) {
	return LoadAllFrom(fsutil.RootReader(root), dir, maxBytes, maxTotal)
}

// LoadAllFrom is LoadAllBounded through r (a task directory opened once, fsutil.Dir); dir is
// relative to r's root, as for LoadAllBounded.
func LoadAllFrom(root fsutil.Reader, dir string, maxBytes, maxTotal int64) (ok []*Evidence, bad []*FileError, err error) {
	return LoadAllKnown(root, dir, maxBytes, maxTotal, nil)
}

// LoadAllKnown is LoadAllFrom for a second read of the same directory (SPEC §7.4's re-read of the
// inputs): a file that still holds the bytes of one of known (by name and SHA256, as the first
// read returned them) is answered by that *Evidence itself instead of being parsed again. Every
// other file, and every refusal (sizes, totals, unreadable or invalid files), is as LoadAllFrom's.
func LoadAllKnown(root fsutil.Reader, dir string, maxBytes, maxTotal int64, known []*Evidence) (ok []*Evidence, bad []*FileError, err error) {
	var byName map[string]*Evidence
	if len(known) > 0 {
		byName = make(map[string]*Evidence, len(known))
		for _, e := range known {
			byName[e.Name] = e
		}
	}
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxTotal == 0 {
		maxTotal = DefaultMaxTotalBytes
	}
	f, err := root.OpenDir(dir) // a named pipe is refused, not waited on
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
	files, sizes, total := evidenceFiles(root, dir, entries, maxBytes)
	if total > maxTotal {
		sort.SliceStable(sizes, func(i, j int) bool { return sizes[i].size > sizes[j].size })
		var largest []string
		for _, s := range sizes[:min(3, len(sizes))] {
			largest = append(largest, fmt.Sprintf("%s %d bytes", s.name, s.size))
		}
		return nil, []*FileError{{Name: dir, Err: &TotalTooLargeError{Files: len(sizes), Total: total, Limit: maxTotal, Largest: largest}}}, nil
	}
	left := maxTotal
	for _, ent := range files {
		name := dir + "/" + ent.Name()
		if left <= 0 {
			bad = append(bad, &FileError{Name: name, Err: fmt.Errorf("not read: the evidence read before it already took the %d bytes that all evidence of a task may total (the files grew since they were listed)", maxTotal)})
			continue
		}
		limit := min(maxBytes, left)
		e, size, err := loadKnown(root, name, limit, byName)
		left -= size
		if size > collectAfterBytes {
			// Parsing a large file leaves about twice its size in garbage (the bytes read and the
			// schema's generic view); the collector's pacing would let that pile up to twice the
			// evidence kept. Collecting here bounds the peak by what is kept plus one file.
			runtime.GC()
		}
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				fe = &FileError{Name: name, Err: err}
			}
			var tl *fsutil.TooLargeError
			if limit < maxBytes && errors.As(err, &tl) {
				// Under the per-file limit but past what the total has left: it grew since the listing.
				fe.Err = fmt.Errorf("%w (all evidence of the task is limited to %d bytes together, and %d were left when it was read)", err, maxTotal, left)
			}
			bad = append(bad, fe)
			continue
		}
		ok = append(ok, e)
	}
	return ok, bad, nil
}

// fileSize is an evidence file's size as listed, before it is read.
type fileSize struct {
	name string
	size int64
}

// evidenceFiles returns the evidence files among the entries of dir (*.json, not hidden) and the
// sizes and total of those that count towards the bound on all files together.
func evidenceFiles(root fsutil.Reader, dir string, entries []fs.DirEntry, maxBytes int64) (files []fs.DirEntry, sizes []fileSize, total int64) {
	for _, ent := range entries {
		if !strings.HasSuffix(ent.Name(), ".json") || strings.HasPrefix(ent.Name(), ".") {
			continue
		}
		files = append(files, ent)
		// Stat through the root follows a symlink only while it stays inside; one that does not is
		// refused when it is read.
		// A file over the per-file limit is refused on its own, unread, so it does not count.
		if fi, err := root.Stat(dir + "/" + ent.Name()); err == nil && fi.Mode().IsRegular() && fi.Size() <= maxBytes {
			total += fi.Size()
			sizes = append(sizes, fileSize{ent.Name(), fi.Size()})
		}
	}
	return files, sizes, total
}

// collectAfterBytes is the size of an evidence file after whose parsing LoadAllBounded collects
// garbage: only large files, so that ordinary evidence (a few KiB) costs nothing.
const collectAfterBytes = 4 << 20

// TotalTooLargeError is a task's evidence refused because all its files together exceed the limit.
type TotalTooLargeError struct {
	Files   int
	Total   int64
	Limit   int64
	Largest []string
}

func (e *TotalTooLargeError) Error() string {
	return fmt.Sprintf("%d evidence files total %d bytes, over the limit of %d bytes for all evidence of a task (largest: %s); none was read",
		e.Files, e.Total, e.Limit, strings.Join(e.Largest, ", "))
}
