package git

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/diff"
)

// Limits of the added-line scan. A line longer than maxChunkBytes is handed on in chunks of that
// size, each starting chunkOverlap bytes before the end of the one before it, so that a pattern
// shorter than the overlap is found wherever it is on the line; memory stays bounded whatever the
// line's length.
const (
	maxChunkBytes = 1 << 20
	chunkOverlap  = 4 << 10
	// inMemoryDiffBytes is the largest file (either version) diffed line by line in memory, as git
	// diff does; a larger modified file is compared by line content (see ScanAdded).
	inMemoryDiffBytes = 16 << 20
)

// AddedScan says what ScanAdded read besides the lines.
type AddedScan struct {
	Files  int      // text files whose added lines were scanned
	Lines  int      // added lines handed on
	Binary []string // files skipped because git would call them binary, sorted
}

// ScanAdded calls fn for every line added between base and head (full SHAs), by path and line:
// the lines `git diff base head` prints with a leading '+', numbered in head. Renames are detected
// as git diff does by default, so a moved file contributes only its edited lines. There is no size
// limit: an added file is streamed (it needs no diff), a modified file of at most 16 MiB is diffed
// line by line in memory (go-git's Myers diff, which may pair lines differently from git's xdiff
// on heavily edited files), and a larger one is compared by content: a line of head counts as
// added when it occurs in head more often than in base (later occurrences first), which never
// misses a line whose text is new. A file that git would call binary (a NUL byte in the first
// 8000 bytes of either version) is not scanned and is listed in Binary. Submodules and deleted
// files have no lines. An error from fn stops the scan and is returned.
func (r *Repo) ScanAdded(base, head string, fn func(AddedLine) error) (*AddedScan, error) {
	changes, err := r.diffTrees(base, head, renameOptions)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(changes, func(a, b *object.Change) int { return strings.Compare(a.To.Name, b.To.Name) })
	scan := &AddedScan{}
	emit := func(l AddedLine) error {
		scan.Lines++
		return fn(l)
	}
	for _, c := range changes {
		if c.To.Name == "" || !c.To.TreeEntry.Mode.IsFile() {
			continue // deleted, or a submodule
		}
		if c.From.Name != "" && c.From.TreeEntry.Hash == c.To.TreeEntry.Hash {
			continue // mode-only change or pure rename
		}
		newBin, newSize, err := r.sniff(c.To)
		if err != nil {
			return nil, err
		}
		old := c.From.Name != "" && c.From.TreeEntry.Mode.IsFile()
		var oldBin bool
		var oldSize int64
		if old {
			if oldBin, oldSize, err = r.sniff(c.From); err != nil {
				return nil, err
			}
		}
		if newBin || oldBin {
			scan.Binary = append(scan.Binary, c.To.Name)
			continue
		}
		scan.Files++
		switch {
		case !old:
			err = r.streamLines(c.To, func(n int, chunk string) error {
				return emit(AddedLine{Path: c.To.Name, Line: n, Text: chunk})
			})
		case newSize <= inMemoryDiffBytes && oldSize <= inMemoryDiffBytes:
			err = r.diffInMemory(c, emit)
		default:
			err = r.diffByContent(c, emit)
		}
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(scan.Binary)
	return scan, nil
}

// AddedLines returns every line ScanAdded finds, with the files it skipped as binary.
func (r *Repo) AddedLines(base, head string) ([]AddedLine, *AddedScan, error) {
	var added []AddedLine
	scan, err := r.ScanAdded(base, head, func(l AddedLine) error {
		added = append(added, l)
		return nil
	})
	return added, scan, err
}

// sniff reports whether a blob is binary for git (a NUL in its first 8000 bytes) and its size.
func (r *Repo) sniff(e object.ChangeEntry) (binary bool, size int64, err error) {
	blob, err := object.GetBlob(r.repo.Storer, e.TreeEntry.Hash)
	if err != nil {
		return false, 0, fmt.Errorf("read %s (%s): %w", e.Name, e.TreeEntry.Hash, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return false, 0, fmt.Errorf("read %s (%s): %w", e.Name, e.TreeEntry.Hash, err)
	}
	defer rd.Close()
	head, err := io.ReadAll(io.LimitReader(rd, binarySniffBytes))
	if err != nil {
		return false, 0, fmt.Errorf("read %s (%s): %w", e.Name, e.TreeEntry.Hash, err)
	}
	return bytes.IndexByte(head, 0) >= 0, blob.Size, nil
}

// streamLines hands on every line of a blob, numbered from 1, without its line ending; a long line
// comes in overlapping chunks with the same number.
func (r *Repo) streamLines(e object.ChangeEntry, fn func(n int, chunk string) error) error {
	blob, err := object.GetBlob(r.repo.Storer, e.TreeEntry.Hash)
	if err != nil {
		return fmt.Errorf("read %s (%s): %w", e.Name, e.TreeEntry.Hash, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return fmt.Errorf("read %s (%s): %w", e.Name, e.TreeEntry.Hash, err)
	}
	defer rd.Close()
	if err := eachLine(rd, fn); err != nil {
		return fmt.Errorf("read %s (%s): %w", e.Name, e.TreeEntry.Hash, err)
	}
	return nil
}

// eachLine splits r into lines as strings.Lines does (a last line without "\n" counts), strips
// "\n" and a "\r" before it, and hands each on, a line longer than maxChunkBytes in chunks.
func eachLine(r io.Reader, fn func(n int, chunk string) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	n := 1
	chunked := false // part of this line has been handed on already
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxChunkBytes {
			if err := fn(n, string(line[:maxChunkBytes])); err != nil {
				return err
			}
			chunked = true
			line = append(line[:0], line[maxChunkBytes-chunkOverlap:]...)
		}
		switch err {
		case bufio.ErrBufferFull:
			continue
		case nil:
			text := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			if !chunked || len(text) > chunkOverlap {
				if err := fn(n, string(text)); err != nil {
					return err
				}
			}
			n++
			line, chunked = line[:0], false
		case io.EOF:
			if len(line) > 0 && (!chunked || len(line) > chunkOverlap) {
				return fn(n, string(bytes.TrimSuffix(line, []byte("\r"))))
			}
			return nil
		default:
			return err
		}
	}
}

// diffInMemory diffs both versions of a file line by line.
func (r *Repo) diffInMemory(c *object.Change, emit func(AddedLine) error) error {
	oldText, err := r.blobText(c.From)
	if err != nil {
		return err
	}
	newText, err := r.blobText(c.To)
	if err != nil {
		return err
	}
	for _, l := range appendAdded(nil, c.To.Name, diff.Do(oldText, newText)) {
		if err := emitChunked(l, emit); err != nil {
			return err
		}
	}
	return nil
}

// emitChunked hands on a line, a long one in overlapping chunks.
func emitChunked(l AddedLine, emit func(AddedLine) error) error {
	for len(l.Text) > maxChunkBytes {
		if err := emit(AddedLine{Path: l.Path, Line: l.Line, Text: l.Text[:maxChunkBytes]}); err != nil {
			return err
		}
		l.Text = l.Text[maxChunkBytes-chunkOverlap:]
	}
	return emit(l)
}

func (r *Repo) blobText(e object.ChangeEntry) (string, error) {
	blob, err := object.GetBlob(r.repo.Storer, e.TreeEntry.Hash)
	if err != nil {
		return "", fmt.Errorf("read %s (%s): %w", e.Name, e.TreeEntry.Hash, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return "", fmt.Errorf("read %s (%s): %w", e.Name, e.TreeEntry.Hash, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return "", fmt.Errorf("read %s (%s): %w", e.Name, e.TreeEntry.Hash, err)
	}
	return string(data), nil
}

// diffByContent finds the added lines of a file too large to diff in memory: it counts base's lines
// by a seeded hash of their content, then streams head twice, first to decide which lines are
// more frequent in head than in base (their later occurrences are the added ones), then to hand
// those on. Memory is one counter per distinct line of base and one bit per line of head.
func (r *Repo) diffByContent(c *object.Change, emit func(AddedLine) error) error {
	seed := maphash.MakeSeed()
	hashLines := func(e object.ChangeEntry, each func(sum uint64)) error {
		var h maphash.Hash
		h.SetSeed(seed)
		last := 0
		err := r.streamLines(e, func(n int, chunk string) error {
			if n != last && last != 0 {
				each(h.Sum64())
				h.Reset()
			}
			if n == last {
				chunk = chunk[min(len(chunk), chunkOverlap):] // the overlap was hashed already
			}
			last = n
			_, _ = h.WriteString(chunk)
			return nil
		})
		if err == nil && last != 0 {
			each(h.Sum64())
		}
		return err
	}
	counts := map[uint64]int{}
	if err := hashLines(c.From, func(sum uint64) { counts[sum]++ }); err != nil {
		return err
	}
	var sums []uint64
	if err := hashLines(c.To, func(sum uint64) { sums = append(sums, sum) }); err != nil {
		return err
	}
	added := make([]bool, len(sums)+1)
	// Match the earliest occurrences with base's lines; what is left over was added.
	for i, sum := range sums {
		if counts[sum] > 0 {
			counts[sum]--
			continue
		}
		added[i+1] = true
	}
	return r.streamLines(c.To, func(n int, chunk string) error {
		if n < len(added) && added[n] {
			return emit(AddedLine{Path: c.To.Name, Line: n, Text: chunk})
		}
		return nil
	})
}
