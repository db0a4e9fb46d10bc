package testresults

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// The bounds of a JUnit read.
const (
	// MaxJUnitFiles is how many files a glob may match.
	MaxJUnitFiles = 256
	// MaxJUnitFileBytes is the largest JUnit file read.
	MaxJUnitFileBytes = 32 << 20
	// MaxJUnitBytes is the most read of all the files together.
	MaxJUnitBytes = 128 << 20
	// maxJUnitWalk is how many directory entries the search for matching files may visit.
	maxJUnitWalk = 200_000
	// maxJUnitDepth bounds the nesting of XML elements.
	maxJUnitDepth = 256
	// mtimeSlack is how far a file's modification time may lie outside the command's run: file
	// systems keep times to a second (or two, FAT) and clocks are read at different moments.
	mtimeSlack = 2 * time.Second
)

// ErrNoResults is wrapped by a JUnit read that found no file to read.
var ErrNoResults = errors.New("no results file")

// junitSuite is an open <testsuite>: what it declares and what its test cases showed.
type junitSuite struct {
	name     string
	declared int // its failures + errors attributes
	failed   int // failing test cases inside it, nested suites included
}

// junitCase is an open <testcase>.
type junitCase struct {
	name    string
	outcome Outcome
}

// ParseJUnit reads one JUnit XML document from r into s: each <testcase> is a test named
// "CLASSNAME.NAME" (or NAME), failed when it has a <failure> or <error> child, skipped when it has
// <skipped>, passed otherwise. A <testsuite> whose failures + errors attributes exceed the failing
// test cases inside it is one failure more, named after the suite (a crash outside any case). The
// document must be well-formed XML with a <testsuites> or <testsuite> root; an error says what is
// wrong, and what was read up to it stays in s.
func ParseJUnit(r io.Reader, s *Summary) error {
	d := xml.NewDecoder(r)
	d.Strict = true
	var (
		suites []junitSuite
		tc     *junitCase
		depth  int
		root   bool
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if !root {
				return errors.New("no <testsuites> or <testsuite> element")
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > maxJUnitDepth {
				return fmt.Errorf("xml: elements nested deeper than %d", maxJUnitDepth)
			}
			switch name := t.Name.Local; {
			case depth == 1 && name != "testsuites" && name != "testsuite":
				return fmt.Errorf("root element <%s>, want <testsuites> or <testsuite>", name)
			case name == "testsuites":
				root = true
			case name == "testsuite" && tc == nil:
				root = true
				f, _ := strconv.Atoi(attr(t, "failures"))
				e, _ := strconv.Atoi(attr(t, "errors"))
				suites = append(suites, junitSuite{name: attr(t, "name"), declared: max(f, 0) + max(e, 0)})
			case name == "testcase" && tc == nil:
				n := attr(t, "name")
				if c := attr(t, "classname"); c != "" {
					n = c + "." + n
				}
				tc = &junitCase{name: n, outcome: Pass}
			case tc != nil && (name == "failure" || name == "error"):
				tc.outcome = Fail
			case tc != nil && name == "skipped" && tc.outcome != Fail:
				tc.outcome = Skip
			}
		case xml.EndElement:
			depth--
			switch t.Name.Local {
			case "testcase":
				if tc == nil {
					break
				}
				s.add(tc.name, tc.outcome)
				if tc.outcome == Fail {
					for i := range suites {
						suites[i].failed++
					}
				}
				tc = nil
			case "testsuite":
				if tc != nil || len(suites) == 0 {
					break
				}
				su := suites[len(suites)-1]
				suites = suites[:len(suites)-1]
				if su.declared > su.failed {
					s.add(fmt.Sprintf("%s [suite reports %d failures and errors, its test cases %d]", su.name, su.declared, su.failed), Fail)
					for i := range suites {
						suites[i].failed += su.declared - su.failed
					}
				}
			}
		}
	}
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// Before is what glob matched before a command ran: each file's identity, size and time.
type Before map[string]fs.FileInfo

// JUnitBefore notes the files glob matches in root before the command runs, for ReadJUnit to
// tell a report the command wrote from one it found there. A search that fails notes nothing
// (ReadJUnit then judges by the times alone).
func JUnitBefore(root *os.Root, glob string) Before {
	files, err := matchFiles(root.FS(), glob)
	if err != nil {
		return nil
	}
	b := Before{}
	for _, name := range files {
		if fi, err := root.Lstat(name); err == nil {
			b[name] = fi
		}
	}
	return b
}

// ReadJUnit reads the JUnit files that glob (a doublestar pattern relative to root, "/"
// separated) matches in root, every one of which must be a regular file written while the
// command ran: not the same file with the same size and time as before noted (see JUnitBefore),
// and modified between since and until (give or take mtimeSlack). A report committed or left by
// an earlier run, or planted with a date in the future, could otherwise stand for this one. A
// symlink or a special file is refused; .git and .geas are never searched. No file found wraps
// ErrNoResults; any file that cannot be read, or does not parse, is an error.
func ReadJUnit(root *os.Root, glob string, before Before, since, until time.Time) (*Summary, error) {
	s := newSummary(JUnit)
	files, err := matchFiles(root.FS(), glob)
	if err != nil {
		return s, err
	}
	if len(files) == 0 {
		return s, fmt.Errorf("%w: nothing matches %q", ErrNoResults, glob)
	}
	var total int64
	for _, name := range files {
		n, err := readJUnitFile(root, name, before[name], since, until, MaxJUnitBytes-total, s)
		if err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
		total += n
		s.Sources = append(s.Sources, name)
	}
	return s, nil
}

// readJUnitFile parses one matched file into s and returns its size.
func readJUnitFile(root *os.Root, name string, prev fs.FileInfo, since, until time.Time, budget int64, s *Summary) (int64, error) {
	fi, err := root.Lstat(name)
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	f, err := root.OpenFile(name, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return 0, err
	}
	switch mt := fi.ModTime(); {
	case prev != nil && os.SameFile(prev, fi) && prev.Size() == fi.Size() && prev.ModTime().Equal(mt):
		return 0, fmt.Errorf("stale: it was there before the command ran, and the command did not write it (modified %s)", mt.UTC().Format(time.RFC3339))
	case !fi.Mode().IsRegular():
		return 0, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	case fi.Size() > MaxJUnitFileBytes:
		return 0, fmt.Errorf("%d bytes, over the limit of %d", fi.Size(), MaxJUnitFileBytes)
	case fi.Size() > budget:
		return 0, fmt.Errorf("the files matched hold more than %d bytes together", MaxJUnitBytes)
	case mt.Before(since.Add(-mtimeSlack)):
		return 0, fmt.Errorf("stale: modified %s, before the command started at %s", mt.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339))
	case mt.After(until.Add(mtimeSlack)):
		return 0, fmt.Errorf("modified %s, after the command ended at %s", mt.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339))
	}
	// The size is read again through the limit: the file may grow after the Stat.
	lr := &io.LimitedReader{R: f, N: fi.Size() + 1}
	if err := ParseJUnit(lr, s); err != nil {
		return 0, err
	}
	if lr.N == 0 {
		return 0, errors.New("the file grew while it was read")
	}
	return fi.Size(), nil
}

// matchFiles lists the paths in fsys that glob matches, in lexical order, searching only below
// the glob's fixed leading directories, never in .git or .geas, and not through symlinks; a
// matched symlink is listed (and refused when read).
func matchFiles(fsys fs.FS, glob string) ([]string, error) {
	if !doublestar.ValidatePattern(glob) {
		return nil, fmt.Errorf("malformed glob %q", glob)
	}
	base, _ := doublestar.SplitPattern(glob)
	if base == "" {
		base = "."
	}
	var files []string
	seen := 0
	err := fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if seen++; seen > maxJUnitWalk {
			return fmt.Errorf("more than %d entries searched for %q", maxJUnitWalk, glob)
		}
		if d.IsDir() {
			if n := path.Base(p); p != base && (n == ".git" || n == ".geas") {
				return fs.SkipDir
			}
			return nil
		}
		if ok, _ := doublestar.Match(glob, p); ok {
			if len(files) == MaxJUnitFiles {
				return fmt.Errorf("more than %d files match %q", MaxJUnitFiles, glob)
			}
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return files, nil
}

// Describe says in a few words what a results declaration reads: "go test -json output",
// "TAP output", "JUnit files reports/*.xml".
func Describe(f Format, glob string) string {
	switch f {
	case GoTestJSON:
		return "go test -json output"
	case TAP:
		return "TAP output"
	case JUnit:
		return "JUnit files " + strings.TrimSpace(glob)
	}
	return string(f)
}
