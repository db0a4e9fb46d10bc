package git

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadObjectMatchesGoGit builds a repository with git (two hundred versions of a text file
// for deep OFS_DELTA chains, a file over 16 KB and one over 1 MB that change, an empty blob, many
// small files in nested trees, an annotated tag), packs it twice (one pack with offset deltas,
// one with REF_DELTA entries only), and reads every object of every pack through readObject and
// through go-git's own index and packfile decoders: the same type and bytes, and the SHA-1 of
// the bytes is the id.
func TestReadObjectMatchesGoGit(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	fastImport(t, r, 0, 100)
	r.git("repack", "-a", "-d", "-f", "-q", "--depth=1000", "--window=50")
	fastImport(t, r, 100, 200)
	r.git("-c", "repack.useDeltaBaseOffset=false", "repack", "-d", "-q", "--depth=1000", "--window=50")

	packDir := filepath.Join(r.dir, ".git", "objects", "pack")
	idxs, err := filepath.Glob(filepath.Join(packDir, "*.idx"))
	require.NoError(t, err)
	require.Len(t, idxs, 2)
	s := r.open().store
	kinds := map[plumbing.ObjectType]int{}
	deepest, large := 0, 0
	for _, idxPath := range idxs {
		name := strings.TrimSuffix(filepath.Base(idxPath), ".idx")
		pi := packNamed(s.packs, name)
		require.GreaterOrEqual(t, pi, 0, name)
		index, pf := goGitPack(t, packDir, name)
		entries, err := index.Entries()
		require.NoError(t, err)
		for {
			e, err := entries.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			want, err := pf.Get(e.Hash)
			require.NoError(t, err, "go-git reads %s", e.Hash)
			wantData := readAll(t, want)
			typ, data, err := s.readObject(e.Hash)
			require.NoError(t, err, "%s", e.Hash)
			require.Equal(t, want.Type(), typ, "%s", e.Hash)
			require.Equal(t, len(wantData), len(data), "%s", e.Hash)
			require.True(t, bytes.Equal(wantData, data), "content of %s", e.Hash)
			require.Equal(t, e.Hash, plumbing.ComputeHash(typ, data))

			pe, err := parsePackEntry(s.packs[pi].pack, int64(e.Offset))
			require.NoError(t, err)
			kinds[pe.typ]++
			deepest = max(deepest, chainDepth(t, s, pi, int64(e.Offset)))
			if len(data) > 1<<20 {
				large++
			}
		}
		require.NoError(t, entries.Close())
		require.NoError(t, pf.Close())
	}
	assert.Positive(t, kinds[plumbing.OFSDeltaObject], "offset deltas")
	assert.Positive(t, kinds[plumbing.REFDeltaObject], "REF deltas")
	assert.Greater(t, deepest, 20, "deep delta chains")
	assert.Positive(t, large, "objects over 1 MB")
}

// fastImport imports commits from up to to onto main, as loose objects: a text file that grows a line a commit,
// one over 16 KB and one over 1 MB edited now and then, an empty file, small files in nested
// directories, and at the end an annotated tag.
func fastImport(t *testing.T, r *gitRepo, from, to int) {
	var stream strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter F <f@example.com> %d +0000\ndata <<EOT\ncommit %d\nEOT\n", fixtureEpoch+i, i)
		if i > 0 && i == from {
			stream.WriteString("from refs/heads/main^0\n")
		}
		inline := func(path string, content []byte) {
			fmt.Fprintf(&stream, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
		}
		inline("grow.txt", sampleText(2000+40*i, "grow"))
		inline(fmt.Sprintf("d%d/e%d/f%d.txt", i%5, i%7, i%11), fmt.Appendf(nil, "small %d\n", i))
		if i%50 == 0 {
			inline("medium.txt", append(sampleText(20<<10, "medium"), fmt.Appendf(nil, "edit %d\n", i)...))
			inline("large.bin", append(sampleText(1<<20+100, "large"), fmt.Appendf(nil, "edit %d\n", i)...))
			inline("empty", nil)
		}
		stream.WriteString("\n")
	}
	fmt.Fprintf(&stream, "tag v%d\nfrom refs/heads/main\ntagger F <f@example.com> %d +0000\ndata <<EOT\nv\nEOT\n\n", to, fixtureEpoch)
	out, err := r.cmd("", []byte(stream.String()), "-c", "fastimport.unpackLimit=1000000", "fast-import", "--quiet").CombinedOutput()
	require.NoError(t, err, "%s", out)
}

func packNamed(packs []*packIndex, name string) int {
	for i, p := range packs {
		if p.name == name {
			return i
		}
	}
	return -1
}

// goGitPack opens a pack with go-git's own index decoder and packfile reader: the oracle.
func goGitPack(t *testing.T, packDir, name string) (*idxfile.MemoryIndex, *packfile.Packfile) {
	idxFile, err := os.Open(filepath.Join(packDir, name+".idx"))
	require.NoError(t, err)
	defer idxFile.Close()
	index := idxfile.NewMemoryIndex()
	require.NoError(t, idxfile.NewDecoder(idxFile).Decode(index))
	fs := osfs.New(packDir)
	f, err := fs.Open(name + ".pack")
	require.NoError(t, err)
	return index, packfile.NewPackfile(index, fs, f, 0)
}

func readAll(t *testing.T, obj plumbing.EncodedObject) []byte {
	rd, err := obj.Reader()
	require.NoError(t, err)
	defer rd.Close()
	data, err := io.ReadAll(rd)
	require.NoError(t, err)
	return data
}

// chainDepth counts the deltas under the entry at off, following bases within the packs.
func chainDepth(t *testing.T, s *lazyStore, pi int, off int64) int {
	for depth := 0; ; depth++ {
		e, err := parsePackEntry(s.packs[pi].pack, off)
		require.NoError(t, err)
		switch e.typ {
		case plumbing.OFSDeltaObject:
			off = e.baseOff
		case plumbing.REFDeltaObject:
			var ok bool
			pi, off, ok, err = s.locate(e.baseRef)
			require.NoError(t, err)
			require.True(t, ok)
		default:
			return depth
		}
	}
}
