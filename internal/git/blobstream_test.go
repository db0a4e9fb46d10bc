package git

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// streamFixture is a repository whose blobs exercise the line splitter: CRLF, empty lines, no
// final newline, a line longer than maxChunkBytes, an empty file, a NUL past the sniff window.
func streamFixture(t *testing.T) (*gitRepo, map[string]string) {
	r := newGitRepo(t)
	files := map[string]string{
		"crlf.txt":  strings.Repeat("a line\r\n\r\n", 3000) + "no newline at the end",
		"long.txt":  "short\n" + strings.Repeat("z", 2*maxChunkBytes+123) + " TODO\n\nend\n",
		"empty.txt": "",
		"nul.txt":   strings.Repeat("x", binarySniffBytes) + "\x00late\n",
		"lf.txt":    strings.Repeat("line with a newline\n", 5000),
	}
	for p, c := range files {
		r.write(p, c)
	}
	r.commit("fixture")
	return r, files
}

// lineRecord is one call of an eachLine callback.
type lineRecord struct {
	n    int
	text string
}

// readSource opens blob h of repo as a blobSource that streams above streamAbove and returns its
// sniff, its lines on two passes, and whether it was streamed.
func readSource(t *testing.T, repo *Repo, h plumbing.Hash, streamAbove int64) (binary bool, passes [2][]lineRecord, streamed bool) {
	t.Helper()
	src := &blobSource{r: repo, path: "p", h: h, streamAbove: streamAbove}
	defer src.close()
	binary, err := src.open()
	require.NoError(t, err)
	streamed = !src.whole()
	for i := range passes {
		require.NoError(t, src.each(func(n int, chunk string) error {
			passes[i] = append(passes[i], lineRecord{n, chunk})
			return nil
		}))
	}
	return binary, passes, streamed
}

// A streamed blob gives the same bytes, binary sniff and lines (on every pass) as a whole read,
// loose and packed; a deltified packed blob is read whole.
func TestOpenBlobStreamedEqualsWhole(t *testing.T) {
	t.Parallel()
	r, files := streamFixture(t)
	check := func(stage string, wantStreamed bool) {
		repo := r.open()
		for path, content := range files {
			h := plumbing.NewHash(r.git("rev-parse", "HEAD:"+path))
			b, err := repo.openBlob(path, h, -1)
			require.NoError(t, err, stage)
			assert.Equal(t, int64(len(content)), b.size, "%s %s", stage, path)
			got, err := io.ReadAll(b.reader())
			require.NoError(t, err, "%s %s", stage, path)
			require.NoError(t, b.close())
			assert.True(t, string(got) == content, "%s %s: streamed bytes differ", stage, path)

			binS, streamedLines, streamed := readSource(t, repo, h, -1)
			binW, wholeLines, streamedW := readSource(t, repo, h, math.MaxInt64)
			assert.Equal(t, wantStreamed, streamed, "%s %s streamed", stage, path)
			assert.False(t, streamedW, "%s %s", stage, path)
			assert.Equal(t, binW, binS, "%s %s binary", stage, path)
			assert.Equal(t, strings.Contains(content[:min(len(content), binarySniffBytes)], "\x00"), binS)
			assert.Equal(t, wholeLines, streamedLines, "%s %s lines", stage, path)
			assert.Equal(t, streamedLines[0], streamedLines[1], "%s %s: the second pass over a stream", stage, path)
			if content != "" {
				assert.NotEmpty(t, wholeLines[0], "%s %s", stage, path)
			}
		}
	}
	check("loose", true)
	r.git("repack", "-a", "-d", "-q")
	check("packed", true)

	// Two near-identical versions: the repack deltifies one of them, which is then read whole.
	r.write("lf.txt", files["lf.txt"]+"one more line\n")
	r.commit("edit")
	r.git("repack", "-a", "-d", "-f", "-q")
	repo := r.open()
	var whole int
	for _, rev := range []string{"HEAD:lf.txt", "HEAD~1:lf.txt"} {
		b, err := repo.openBlob("lf.txt", plumbing.NewHash(r.git("rev-parse", rev)), -1)
		require.NoError(t, err)
		if b.rc == nil {
			whole++
		}
		require.NoError(t, b.close())
	}
	assert.Equal(t, 1, whole, "one of two near-identical blobs is a delta, read whole")
}

// plantLoose plants a loose object file for id whose inflated content is raw (header included),
// and returns id.
func plantLoose(t *testing.T, r *gitRepo, id string, raw []byte, damage func([]byte) []byte) plumbing.Hash {
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	_, err := zw.Write(raw)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	data := buf.Bytes()
	if damage != nil {
		data = damage(data)
	}
	p := filepath.Join(r.dir, ".git", "objects", id[:2], id[2:])
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, data, 0o444))
	return plumbing.NewHash(id)
}

// A stream that gives fewer or more bytes than its header declares, or whose checksum is wrong, is
// an error at its end, never a short or long content taken as the blob.
func TestOpenBlobStreamRefusesLies(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write("a", "a\n")
	r.commit("base")
	repo := r.open()
	cases := []struct {
		name, id string
		raw      string
		damage   func([]byte) []byte
		want     string
	}{
		{"short", "1111111111111111111111111111111111111111", "blob 10\x0012345", nil, "5 bytes, the header says 10"},
		{"long", "2222222222222222222222222222222222222222", "blob 3\x0012345", nil, "more than the 3 bytes"},
		{"checksum", "3333333333333333333333333333333333333333", "blob 5\x0012345", func(b []byte) []byte {
			b[len(b)-1] ^= 0xff
			return b
		}, "checksum"},
		{"not a blob", "4444444444444444444444444444444444444444", "tree 5\x0012345", nil, "not a blob"},
	}
	// An object that is nowhere is an error, never an empty blob.
	_, err := repo.openBlob("x", plumbing.NewHash("5555555555555555555555555555555555555555"), -1)
	require.ErrorIs(t, err, plumbing.ErrObjectNotFound)
	_, err = repo.openBlob("x", plumbing.NewHash("5555555555555555555555555555555555555555"), math.MaxInt64)
	require.ErrorIs(t, err, plumbing.ErrObjectNotFound)
	for _, c := range cases {
		h := plantLoose(t, r, c.id, []byte(c.raw), c.damage)
		b, err := repo.openBlob("x", h, -1)
		if err == nil {
			_, err = io.ReadAll(b.reader())
			_ = b.close() // zlib's Close repeats a read error
		}
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
}

// diffByContent gives the same added lines whether the versions are streamed or read whole.
func TestDiffByContentStreamedEqualsWhole(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	old := strings.Repeat("same\nother\r\n", 2000) + strings.Repeat("q", maxChunkBytes+5) + "\n"
	r.write("f.txt", old)
	r.commit("base")
	r.write("f.txt", "new first\n"+old+"same\n"+strings.Repeat("q", maxChunkBytes+5)+"\nnew "+strings.Repeat("w", maxChunkBytes+9)+"\n")
	r.commit("head")
	repo := r.open()
	run := func(streamAbove int64) []AddedLine {
		var got []AddedLine
		src := func(rev string) *blobSource {
			s := &blobSource{r: repo, path: "f.txt", h: plumbing.NewHash(r.git("rev-parse", rev+":f.txt")), streamAbove: streamAbove}
			_, err := s.open()
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.close() })
			return s
		}
		require.NoError(t, diffByContent("f.txt", src("HEAD~1"), src("HEAD"), func(l AddedLine) error {
			got = append(got, l)
			return nil
		}))
		return got
	}
	streamed, whole := run(-1), run(math.MaxInt64)
	assert.Equal(t, whole, streamed)
	var lines []int
	for _, l := range whole {
		lines = append(lines, l.Line)
	}
	// line 1, the extra "same" (4003), the extra long q line (4004, two chunks), the new long line (two chunks)
	assert.Equal(t, []int{1, 4003, 4004, 4004, 4005, 4005}, lines)
}

// ScanAdded streams an added file over streamAddedBytes and hands on exactly the lines a whole
// read gives, loose and packed.
func TestScanAddedStreamsLargeAddedFile(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write("keep.txt", "k\n")
	base := r.commit("base")
	var big strings.Builder
	for i := 0; big.Len() <= streamAddedBytes; i++ {
		fmt.Fprintf(&big, "line %d\r\n", i)
		if i == 1000 {
			big.WriteString(strings.Repeat("L", maxChunkBytes+77) + "\n\n")
		}
	}
	big.WriteString("// TODO at the end, no newline")
	content := big.String()
	r.write("big.txt", content)
	head := r.commit("head")
	var want []AddedLine
	require.NoError(t, eachLineOf([]byte(content), func(n int, chunk string) error {
		want = append(want, AddedLine{Path: "big.txt", Line: n, Text: chunk})
		return nil
	}))
	for _, stage := range []string{"loose", "packed"} {
		if stage == "packed" {
			r.git("repack", "-a", "-d", "-q")
		}
		repo := r.open()
		h := plumbing.NewHash(r.git("rev-parse", "HEAD:big.txt"))
		b, err := repo.openBlob("big.txt", h, streamAddedBytes)
		require.NoError(t, err)
		assert.NotNil(t, b.rc, "%s: the file is streamed", stage)
		require.NoError(t, b.close())
		got, scan, err := repo.AddedLines(base, head)
		require.NoError(t, err)
		assert.Equal(t, want, got, stage)
		assert.Equal(t, 1, scan.Files, stage)
		assert.Equal(t, "// TODO at the end, no newline", got[len(got)-1].Text, stage)
	}
}
