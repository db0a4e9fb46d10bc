package evidence

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/diff"
)

// ScanStats says what ScanAdded read.
type ScanStats struct {
	Files    int      // files whose added lines were scanned
	Binary   []string // files skipped because git would call them binary (either version), sorted
	Streamed []string // files larger than the diff limit, scanned streamed, sorted
}

// scanWindow is how much of one line ScanAdded hands to keep at a time: a longer line is matched
// in windows of this size that overlap by scanOverlap bytes, so memory stays bounded whatever a
// line's length, and a match of up to scanOverlap bytes is seen wherever it falls.
const (
	scanWindow  = 1 << 20
	scanOverlap = 4 << 10
)

// ScanAdded returns every line added between base and head (full SHAs) that keep accepts, sorted
// by path and line, whatever the files' sizes (SPEC §5.3 D: every added line of every text file
// is scanned). Files up to maxDiffBytes (0 means DefaultMaxDiffFileBytes) in both versions are
// line-diffed exactly as AddedLines does. A larger file is streamed: a line of head that keep
// accepts is added unless the base version holds as many copies of it as head does before it
// (the lines that no diff can pair with a base line), so memory is bounded by the accepted
// lines of the base version, not the file. A line longer than the window is matched in
// overlapping windows, and the window that matched is the returned Text. Files git would call
// binary (a NUL byte in the first 8000 bytes of either version) are skipped and listed in the
// stats; submodules and deletions add nothing.
func (r *Repo) ScanAdded(base, head string, maxDiffBytes int64, keep func(string) bool) ([]AddedLine, ScanStats, error) {
	var st ScanStats
	if maxDiffBytes <= 0 {
		maxDiffBytes = DefaultMaxDiffFileBytes
	}
	changes, err := r.diffTrees(base, head, renameOptions)
	if err != nil {
		return nil, st, err
	}
	var added []AddedLine
	for _, c := range changes {
		if c.To.Name == "" || !c.To.TreeEntry.Mode.IsFile() {
			continue // deleted, or a submodule
		}
		if c.From.Name != "" && c.From.TreeEntry.Hash == c.To.TreeEntry.Hash {
			continue // mode-only change or pure rename
		}
		hasOld := c.From.Name != "" && c.From.TreeEntry.Mode.IsFile()
		newBlob, err := object.GetBlob(r.repo.Storer, c.To.TreeEntry.Hash)
		if err != nil {
			return nil, st, fmt.Errorf("read %s (%s): %w", c.To.Name, c.To.TreeEntry.Hash, err)
		}
		var oldBlob *object.Blob
		if hasOld {
			if oldBlob, err = object.GetBlob(r.repo.Storer, c.From.TreeEntry.Hash); err != nil {
				return nil, st, fmt.Errorf("read %s (%s): %w", c.From.Name, c.From.TreeEntry.Hash, err)
			}
		}
		bin, err := blobIsBinary(newBlob)
		if err == nil && !bin && oldBlob != nil {
			bin, err = blobIsBinary(oldBlob)
		}
		if err != nil {
			return nil, st, fmt.Errorf("read %s: %w", c.To.Name, err)
		}
		if bin {
			st.Binary = append(st.Binary, c.To.Name)
			continue
		}
		st.Files++
		if newBlob.Size <= maxDiffBytes && (oldBlob == nil || oldBlob.Size <= maxDiffBytes) {
			newText, _, err := r.diffableText(c.To, maxDiffBytes)
			if err != nil {
				return nil, st, err
			}
			var oldText string
			if oldBlob != nil {
				if oldText, _, err = r.diffableText(c.From, maxDiffBytes); err != nil {
					return nil, st, err
				}
			}
			for _, l := range appendAdded(nil, c.To.Name, diff.Do(oldText, newText)) {
				if keep(l.Text) {
					added = append(added, l)
				}
			}
			continue
		}
		st.Streamed = append(st.Streamed, c.To.Name)
		old := map[string]int{}
		if oldBlob != nil {
			if err := scanBlobLines(oldBlob, keep, func(_ int, key, _ string) { old[key]++ }); err != nil {
				return nil, st, fmt.Errorf("read %s (%s): %w", c.From.Name, c.From.TreeEntry.Hash, err)
			}
		}
		err = scanBlobLines(newBlob, keep, func(n int, key, text string) {
			if old[key] > 0 {
				old[key]--
				return
			}
			added = append(added, AddedLine{Path: c.To.Name, Line: n, Text: text})
		})
		if err != nil {
			return nil, st, fmt.Errorf("read %s (%s): %w", c.To.Name, c.To.TreeEntry.Hash, err)
		}
	}
	slices.SortFunc(added, func(a, b AddedLine) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	slices.Sort(st.Binary)
	slices.Sort(st.Streamed)
	return added, st, nil
}

// blobIsBinary reports what git calls a binary file: a NUL byte in its first 8000 bytes.
func blobIsBinary(b *object.Blob) (bool, error) {
	rd, err := b.Reader()
	if err != nil {
		return false, err
	}
	defer rd.Close()
	head, err := io.ReadAll(io.LimitReader(rd, binarySniffBytes))
	if err != nil {
		return false, err
	}
	return bytes.IndexByte(head, 0) >= 0, nil
}

// scanBlobLines streams a blob's lines (split as strings.Lines does, line endings dropped) and
// calls found for each line keep accepts, with its 1-based number, a key that identifies its full
// content (the text itself, or a digest for a long line) and the text or window that matched.
func scanBlobLines(b *object.Blob, keep func(string) bool, found func(n int, key, text string)) error {
	rd, err := b.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	br := bufio.NewReaderSize(rd, 64<<10)
	var window []byte
	for n := 1; ; n++ {
		window = window[:0]
		h := sha256.New()
		long, matched, hit := false, false, ""
		eof := false
		for {
			piece, err := br.ReadSlice('\n')
			window = append(window, piece...)
			h.Write(piece)
			if len(window) > scanWindow { // a long line: match this window, keep its tail
				long = true
				if !matched && keep(string(window)) {
					matched, hit = true, string(window)
				}
				window = append(window[:0], window[len(window)-scanOverlap:]...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				eof = true
			} else if err != nil {
				return err
			}
			break
		}
		if eof && len(window) == 0 && !long {
			return nil // the end of the text, after a final newline or an empty file
		}
		text := strings.TrimSuffix(strings.TrimSuffix(string(window), "\n"), "\r")
		if !matched && keep(text) {
			matched, hit = true, text
		}
		if matched {
			key := hit
			if long {
				key = "sha256:" + hex.EncodeToString(h.Sum(nil))
			}
			found(n, key, hit)
		}
		if eof {
			return nil
		}
	}
}
