package git

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every added line is scanned whatever the file's size (SPEC §5.3 D): an added file over 1 MiB, a
// modified file over the in-memory diff limit, a line over the chunk size; binaries are counted.
func TestScanAddedLargeFiles(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	var big strings.Builder
	for i := 0; big.Len() <= inMemoryDiffBytes+1<<20; i++ {
		fmt.Fprintf(&big, "line %d of a large generated file\n", i)
	}
	r.write("huge.txt", big.String())
	r.write("keep.txt", "k\n")
	base := r.commit("base")

	r.write("added.txt", strings.Repeat("filler line\n", 200_000)+"// TODO in an added 2 MiB file\n")
	lines := strings.SplitAfter(big.String(), "\n")
	edited := strings.Join(lines[:1000], "") + "// TODO in the middle of a huge file\n" + strings.Join(lines[1000:], "") + "line 5 of a large generated file\n"
	r.write("huge.txt", edited)
	r.write("long.txt", strings.Repeat("x", 3*maxChunkBytes+17)+" TODO at the end of a 3 MiB line\nnext\n")
	r.write("img.png", "\x89PNG\x00\x00 TODO\n")
	r.write("nul.go", "package x\x00\n// TODO\n")
	head := r.commit("head")
	repo := r.open()

	found := map[string][]int{}
	var longest int
	scan, err := repo.ScanAdded(base, head, func(l AddedLine) error {
		longest = max(longest, len(l.Text))
		if strings.Contains(l.Text, "TODO") {
			found[l.Path] = append(found[l.Path], l.Line)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, map[string][]int{
		"added.txt": {200_001},
		"huge.txt":  {1001},
		"long.txt":  {1},
	}, found)
	assert.LessOrEqual(t, longest, maxChunkBytes, "a long line comes in bounded chunks")
	assert.Equal(t, []string{"img.png", "nul.go"}, scan.Binary)
	assert.Equal(t, 3, scan.Files)

	// The content comparison of a huge file says a duplicated line is added once (the later one).
	var dup []AddedLine
	_, err = repo.ScanAdded(base, head, func(l AddedLine) error {
		if l.Path == "huge.txt" {
			dup = append(dup, l)
		}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, dup, 2)
	assert.Equal(t, "line 5 of a large generated file", dup[1].Text)
	assert.Equal(t, len(lines)+1, dup[1].Line)
}

func TestEachLineChunks(t *testing.T) {
	t.Parallel()
	type piece struct {
		n   int
		len int
	}
	var got []piece
	text := "a\r\n" + strings.Repeat("y", maxChunkBytes+10) + "\n\nlast"
	require.NoError(t, eachLine(strings.NewReader(text), func(n int, c string) error {
		got = append(got, piece{n, len(c)})
		return nil
	}))
	assert.Equal(t, []piece{{1, 1}, {2, maxChunkBytes}, {2, chunkOverlap + 10}, {3, 0}, {4, 4}}, got)
}
