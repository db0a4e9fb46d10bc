package git

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
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
	// streamAddedBytes is the largest added file read whole; a larger one is streamed.
	streamAddedBytes = 8 << 20
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
// limit (SPEC §5.3 D), and the memory a file needs is bounded by its path:
//   - an added file needs no diff (every line is added): one of at most streamAddedBytes is read
//     whole and split in place, a larger one is streamed (a 64 KiB buffer and the chunk of the
//     line being read, at most maxChunkBytes);
//   - a modified file whose versions are both read whole and have at most inMemoryDiffBytes each is
//     diffed line by line in memory (go-git's Myers diff, which may pair lines differently from
//     git's xdiff on heavily edited files): both versions, the diff's line tables and its result;
//   - a larger modified file is compared by content (diffByContent), each version streamed unless
//     it was read whole: a line of head counts as added when it occurs in head more often than in
//     base (later occurrences first), which never misses a line whose text is new. It needs one
//     map entry per distinct line of base and one byte per line of head, besides any version that
//     was read whole (a deltified blob, whatever its size).
//
// Lines are handed on in bounded chunks whatever their length. A file that git would call binary
// (a NUL byte in the first 8000 bytes of either version) is not scanned and is listed in Binary.
// Submodules and deleted files have no lines. An error from fn stops the scan and is returned. The
// tree diff is the one ChangedFiles reads (made once a pair).
func (r *Repo) ScanAdded(base, head string, fn func(AddedLine) error) (*AddedScan, error) {
	defer r.readingFor("the added-line scan of " + short12(base) + ".." + short12(head))()
	changes, err := r.scanChanges(base, head)
	if err != nil {
		return nil, err
	}
	scan := &AddedScan{}
	emit := func(l AddedLine) error {
		scan.Lines++
		return fn(l)
	}
	for _, c := range changes {
		if c.to.mode == 0 || !c.to.mode.IsFile() {
			continue // deleted, or a submodule
		}
		if c.from.mode != 0 && c.from.hash == c.to.hash {
			continue // mode-only change or pure rename
		}
		text, err := r.scanFile(c, emit)
		if err != nil {
			return nil, err
		}
		if text {
			scan.Files++
		} else {
			scan.Binary = append(scan.Binary, c.toPath)
		}
	}
	slices.Sort(scan.Binary)
	return scan, nil
}

// scanFile hands on the added lines of one changed file (see ScanAdded); text is false when git
// would call the file binary, and nothing is handed on.
func (r *Repo) scanFile(c scanChange, emit func(AddedLine) error) (text bool, err error) {
	old := c.from.mode != 0 && c.from.mode.IsFile()
	streamAbove := int64(streamAddedBytes)
	if old {
		streamAbove = inMemoryDiffBytes
	}
	newSrc := &blobSource{r: r, path: c.toPath, h: c.to.hash, streamAbove: streamAbove}
	defer newSrc.close()
	if bin, err := newSrc.open(); err != nil || bin {
		return false, err
	}
	if !old {
		return true, newSrc.each(func(n int, chunk string) error {
			return emit(AddedLine{Path: c.toPath, Line: n, Text: chunk})
		})
	}
	oldSrc := &blobSource{r: r, path: c.fromPath, h: c.from.hash, streamAbove: streamAbove}
	defer oldSrc.close()
	if bin, err := oldSrc.open(); err != nil || bin {
		return false, err
	}
	if oldSrc.whole() && newSrc.whole() && oldSrc.b.size <= inMemoryDiffBytes && newSrc.b.size <= inMemoryDiffBytes {
		return true, diffInMemory(c.toPath, oldSrc.b.data, newSrc.b.data, emit)
	}
	return true, diffByContent(c.toPath, oldSrc, newSrc, emit)
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

// scanChange is a changed file as the added-line scan sees it, after rename detection: a path on
// each side ("" where absent).
type scanChange struct {
	fromPath, toPath string
	from, to         changeSide
}

// scanChanges returns the tree diff of base..head with renames detected as git diff does by
// default (go-git's DetectRenames with renameOptions), ordered by head path. Rename detection
// runs only when the diff both adds and deletes files: otherwise there is nothing to pair.
func (r *Repo) scanChanges(base, head string) ([]scanChange, error) {
	changes, err := r.treeChanges(base, head)
	if err != nil {
		return nil, err
	}
	var adds, dels bool
	for _, c := range changes {
		adds = adds || c.from.mode == 0
		dels = dels || c.to.mode == 0
	}
	out := make([]scanChange, 0, len(changes))
	if !adds || !dels {
		for _, c := range changes {
			sc := scanChange{from: c.from, to: c.to}
			if c.from.mode != 0 {
				sc.fromPath = c.path
			}
			if c.to.mode != 0 {
				sc.toPath = c.path
			}
			out = append(out, sc)
		}
		return out, nil // in path order already
	}
	renamed, err := r.detectRenames(base, head, changes)
	if err != nil {
		return nil, err
	}
	for _, c := range renamed {
		out = append(out, scanChange{fromPath: c.From.Name, toPath: c.To.Name,
			from: changeSide{c.From.TreeEntry.Mode, c.From.TreeEntry.Hash},
			to:   changeSide{c.To.TreeEntry.Mode, c.To.TreeEntry.Hash}})
	}
	slices.SortStableFunc(out, func(a, b scanChange) int { return strings.Compare(a.toPath, b.toPath) })
	return out, nil
}

// detectRenames hands the tree diff to go-git's rename detection, which reads the candidate blobs
// through the trees it is given.
func (r *Repo) detectRenames(base, head string, changes []treeChange) (object.Changes, error) {
	var trees [2]*object.Tree
	for i, sha := range [2]string{base, head} {
		h, err := r.commitTree([2]string{"base", "head"}[i], sha)
		if err != nil {
			return nil, err
		}
		if trees[i], err = object.GetTree(r.store, h); err != nil {
			return nil, fmt.Errorf("read tree %s: %w", h, err)
		}
	}
	entry := func(path string, tree *object.Tree, s changeSide) object.ChangeEntry {
		if s.mode == 0 {
			return object.ChangeEntry{}
		}
		// go-git checks TreeEntry.Name as a path when it reads the blob, and refuses bytes that
		// git allows in a name; the path is Name, which is what the detection compares.
		return object.ChangeEntry{Name: path, Tree: tree, TreeEntry: object.TreeEntry{Name: "blob", Mode: s.mode, Hash: s.hash}}
	}
	oc := make(object.Changes, len(changes))
	for i, c := range changes {
		oc[i] = &object.Change{From: entry(c.path, trees[0], c.from), To: entry(c.path, trees[1], c.to)}
	}
	renamed, err := object.DetectRenames(oc, renameOptions)
	if err != nil {
		return nil, fmt.Errorf("detect renames %s..%s: %w", base, head, err)
	}
	return renamed, nil
}

// isBinary reports whether git would call content binary: a NUL in its first 8000 bytes.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), binarySniffBytes)], 0) >= 0
}

// eachLineOf is eachLine over content in memory: the same lines, numbers and chunks. Content of at
// most maxChunkBytes has no line to chunk and is split in place.
func eachLineOf(data []byte, fn func(n int, chunk string) error) error {
	if len(data) > maxChunkBytes {
		return eachLine(bytes.NewReader(data), fn)
	}
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if err := fn(n, string(bytes.TrimSuffix(line, []byte("\r")))); err != nil {
			return err
		}
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

// diffInMemory diffs both versions of a file line by line (addedByLineDiff).
func diffInMemory(path string, oldData, newData []byte, emit func(AddedLine) error) error {
	for _, l := range addedByLineDiff(path, string(oldData), string(newData)) {
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

// diffByContent finds the added lines of a file too large to diff in memory: it counts base's lines
// by a seeded hash of their content, then reads head twice, first to decide line by line whether
// a line is still matched by an unused occurrence in base (the earliest occurrences are matched,
// so the later ones of a line more frequent in head than in base are the added ones), then to
// hand the added ones on. Memory is one counter per distinct line of base and one byte per line
// of head, the versions being streamed unless they were read whole.
func diffByContent(path string, oldSrc, newSrc *blobSource, emit func(AddedLine) error) error {
	seed := maphash.MakeSeed()
	hashLines := func(src *blobSource, each func(sum uint64)) error {
		var h maphash.Hash
		h.SetSeed(seed)
		last := 0
		err := src.each(func(n int, chunk string) error {
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
	if err := hashLines(oldSrc, func(sum uint64) { counts[sum]++ }); err != nil {
		return err
	}
	added := []bool{false} // by line number
	if err := hashLines(newSrc, func(sum uint64) {
		matched := counts[sum] > 0
		if matched {
			counts[sum]--
		}
		added = append(added, !matched)
	}); err != nil {
		return err
	}
	return newSrc.each(func(n int, chunk string) error {
		if n < len(added) && added[n] {
			return emit(AddedLine{Path: path, Line: n, Text: chunk})
		}
		return nil
	})
}

// blobSource is one version of a changed file for the added-line scan: read whole when it has at
// most streamAbove bytes (or is deltified), else streamed, and opened again for each further
// pass over a stream.
type blobSource struct {
	r           *Repo
	path        string
	h           plumbing.Hash
	streamAbove int64
	b           blobContent // the content opened last
	used        bool        // b's stream has been read: each opens it again
}

// open opens the content and reports whether git would call it binary (a NUL in the first 8000
// bytes). A binary stream is read to its end, which verifies it.
func (s *blobSource) open() (binary bool, err error) {
	if s.b, err = s.r.openBlob(s.path, s.h, s.streamAbove); err != nil {
		return false, err
	}
	s.used = false
	if s.whole() {
		return isBinary(s.b.data), nil
	}
	br := bufio.NewReaderSize(s.b.rc, 64<<10)
	head, err := br.Peek(binarySniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read %s (%s): %w", s.path, s.h, err)
	}
	s.b.rc = struct {
		io.Reader
		io.Closer
	}{br, s.b.rc}
	if bytes.IndexByte(head, 0) < 0 {
		return false, nil
	}
	// Binary: not scanned, but read to its end all the same, where the stream is verified against
	// the blob's id. A forged blob must not pass for binary to keep its lines from the scan.
	if _, err := io.Copy(io.Discard, s.b.rc); err != nil {
		return false, fmt.Errorf("read %s (%s): %w", s.path, s.h, err)
	}
	s.used = true
	return true, nil
}

// whole reports whether the content was read whole.
func (s *blobSource) whole() bool { return s.b.rc == nil }

// each hands on the lines of the content as eachLine does, opening a stream again when it has been
// read before.
func (s *blobSource) each(fn func(n int, chunk string) error) error {
	if s.whole() {
		return eachLineOf(s.b.data, fn)
	}
	if s.used {
		if err := s.close(); err != nil {
			return err
		}
		if _, err := s.open(); err != nil {
			return err
		}
	}
	s.used = true
	var fnErr error // an error of fn's is returned as it is
	err := eachLine(s.b.rc, func(n int, chunk string) error {
		fnErr = fn(n, chunk)
		return fnErr
	})
	if err != nil && fnErr == nil {
		return fmt.Errorf("read %s (%s): %w", s.path, s.h, err)
	}
	return err
}

// close releases a stream.
func (s *blobSource) close() error { return s.b.close() }
