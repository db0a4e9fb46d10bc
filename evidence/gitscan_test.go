package evidence

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanAddedReadsEveryTextLine: ScanAdded finds the same added lines as AddedLines where both
// diff, and also in files past the diff limit (streamed), in a line longer than the window, and
// across a window boundary; binary files are listed, never silently dropped.
func TestScanAddedReadsEveryTextLine(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	todo := func(s string) bool { return strings.Contains(strings.ToLower(s), "todo") }
	filler := strings.Repeat("filler\n", 200)
	r.write("small.txt", "a\nb\n")
	r.write("grown.txt", filler+"old TODO\n"+filler)
	r.write("bin.dat", "\x00\x01binary\n")
	base := r.commit("base")

	r.write("small.txt", "a\nnew TODO\nb\n")
	r.write("grown.txt", filler+"old TODO\n"+filler+"old TODO\nfresh todo\n")
	r.write("bin.dat", "\x00\x01binary\nTODO text in a binary file\n")
	r.write("added.txt", filler+"TODO at the end")
	r.write("long.txt", "x\n"+strings.Repeat("a", scanWindow-2)+"TODO"+strings.Repeat("b", 3*scanWindow)+"\ny\n")
	r.write("tobin.txt", "\x00 now binary\nTODO\n")
	head := r.commit("head")
	repo := r.open()

	exact, st, err := repo.ScanAdded(base, head, 0, todo)
	require.NoError(t, err)
	assert.Equal(t, []string{"bin.dat", "tobin.txt"}, st.Binary)
	assert.Equal(t, []string{"long.txt"}, st.Streamed, "past the 1 MiB default")
	assert.Equal(t, []AddedLine{{"added.txt", 201, "TODO at the end"}, {"grown.txt", 402, "old TODO"}, {"grown.txt", 403, "fresh todo"}, {"small.txt", 2, "new TODO"}}, withoutLong(exact))

	// A limit of 100 bytes streams every file but small.txt: the same stubs, by line number.
	streamed, st, err := repo.ScanAdded(base, head, 100, todo)
	require.NoError(t, err)
	assert.Equal(t, []string{"added.txt", "grown.txt", "long.txt"}, st.Streamed)
	assert.Equal(t, []string{"bin.dat", "tobin.txt"}, st.Binary)
	assert.Equal(t, withoutLong(exact), withoutLong(streamed))
	var long []AddedLine
	for _, l := range streamed {
		if l.Path == "long.txt" {
			long = append(long, l)
		}
	}
	require.Len(t, long, 1, "the long line is one stub, found across the window boundary")
	assert.Equal(t, 2, long[0].Line)
	assert.LessOrEqual(t, len(long[0].Text), scanWindow+64<<10, "the text is the window that matched, not the whole line")
	assert.True(t, todo(long[0].Text))

	nothing, st, err := repo.ScanAdded(head, head, 0, todo)
	require.NoError(t, err)
	assert.Empty(t, nothing)
	assert.Zero(t, st.Files)
}

func withoutLong(lines []AddedLine) []AddedLine {
	var out []AddedLine
	for _, l := range lines {
		if l.Path != "long.txt" {
			out = append(out, l)
		}
	}
	return out
}
