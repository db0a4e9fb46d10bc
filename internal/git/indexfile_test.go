package git

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func goGitDecodeIndex(data []byte) (*index.Index, error) {
	idx := &index.Index{}
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
		return nil, err
	}
	return idx, nil
}

// sameAsGoGit fails the test when decodeIndex's answer on data is not go-git's.
func sameAsGoGit(t *testing.T, what string, data []byte) bool {
	t.Helper()
	got, gotErr := decodeIndex(data)
	want, wantErr := goGitDecodeIndex(data)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Errorf("%s: error %v, go-git's %v", what, gotErr, wantErr)
		return false
	}
	if !sameIndex(got, want) {
		t.Errorf("%s: decoded not as go-git: %s", what, indexDiff(got, want))
		return false
	}
	return true
}

// sameIndex compares two decoded indexes. go-git's REUC decoder reads a path's stage ids in map
// order (index/decoder.go resolveUndoDecoder), so when they differ it answers differently from
// run to run: each path's stages are compared as a set of modes and a multiset of ids.
func sameIndex(a, b *index.Index) bool {
	if a == nil || b == nil {
		return a == b
	}
	ac, bc := *a, *b
	ac.ResolveUndo, bc.ResolveUndo = nil, nil
	if !reflect.DeepEqual(&ac, &bc) || (a.ResolveUndo == nil) != (b.ResolveUndo == nil) {
		return false
	}
	if a.ResolveUndo == nil {
		return true
	}
	return reflect.DeepEqual(reucShape(a.ResolveUndo), reucShape(b.ResolveUndo))
}

func reucShape(r *index.ResolveUndo) []string {
	var out []string
	if r == nil {
		return nil
	}
	for _, e := range r.Entries {
		var ids []string
		for stage, h := range e.Stages {
			out = append(out, fmt.Sprintf("%s stage %d", e.Path, stage))
			ids = append(ids, h.String())
		}
		slices.Sort(ids)
		out = append(out, e.Path+" "+strings.Join(ids, ","))
	}
	slices.Sort(out)
	return out
}

// indexDiff names the first difference between two decoded indexes.
func indexDiff(a, b *index.Index) string {
	if a == nil || b == nil {
		return fmt.Sprintf("%v vs %v", a == nil, b == nil)
	}
	if len(a.Entries) != len(b.Entries) {
		return fmt.Sprintf("%d entries vs %d", len(a.Entries), len(b.Entries))
	}
	for i := range a.Entries {
		if !reflect.DeepEqual(a.Entries[i], b.Entries[i]) {
			return fmt.Sprintf("entry %d: %#v vs %#v", i, *a.Entries[i], *b.Entries[i])
		}
	}
	if !reflect.DeepEqual(a.Cache, b.Cache) {
		return fmt.Sprintf("cache %+v vs %+v", a.Cache, b.Cache)
	}
	if !reflect.DeepEqual(reucShape(a.ResolveUndo), reucShape(b.ResolveUndo)) {
		return fmt.Sprintf("reuc %+v vs %+v", a.ResolveUndo, b.ResolveUndo)
	}
	return fmt.Sprintf("v%d vs v%d, cache %v vs %v, reuc %v vs %v, eoie %v vs %v", a.Version, b.Version,
		a.Cache != nil, b.Cache != nil, a.ResolveUndo != nil, b.ResolveUndo != nil, a.EndOfIndexEntry != nil, b.EndOfIndexEntry != nil)
}

// resum replaces the trailing checksum of an index with the right one.
func resum(b []byte) []byte {
	if len(b) < sha1.Size {
		return b
	}
	sum := sha1.Sum(b[:len(b)-sha1.Size])
	copy(b[len(b)-sha1.Size:], sum[:])
	return b
}

// indexShapes makes, with the git CLI, an index of every shape the decoder knows: versions 2, 3
// and 4, extended flags, unmerged stages, a path longer than the 12-bit length, and the TREE,
// REUC, UNTR, EOIE/IEOT and split-index ("link") extensions.
func indexShapes(t *testing.T) map[string][]byte {
	r := newGitRepo(t)
	r.write("a.go", "package a\n")
	r.write("dir/b.txt", "bee\n")
	r.write("dir/sub/c.txt", "sea\n")
	r.commit("base")
	shapes := map[string][]byte{}
	snap := func(name string) {
		b, err := os.ReadFile(filepath.Join(r.dir, ".git", "index"))
		require.NoError(t, err)
		shapes[name] = b
	}
	snap("v2+TREE")
	blob := r.git("rev-parse", "HEAD:a.go")
	long := strings.Repeat("d/", 2100) + "long.txt" // 4,208 bytes: past the 12-bit name length
	r.git("update-index", "--add", "--cacheinfo", "100644,"+blob+","+long)
	snap("v2 long path")
	r.write("new.txt", "new\n")
	r.git("add", "-N", "new.txt")
	r.git("update-index", "--skip-worktree", "a.go")
	snap("v3 extended flags")
	r.git("update-index", "--index-version", "4")
	snap("v4")
	r.git("update-index", "--index-version", "2")
	conflict := "0 0000000000000000000000000000000000000000\tdir/b.txt\n" +
		"100644 " + blob + " 1\tdir/b.txt\n100644 " + blob + " 2\tdir/b.txt\n100644 " + blob + " 3\tdir/b.txt\n"
	cmd := r.cmd("", []byte(conflict), "update-index", "--index-info")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	snap("unmerged stages")
	r.git("update-index", "--index-version", "4")
	snap("v4 unmerged stages")
	r.git("update-index", "--index-version", "2")
	r.git("add", "dir/b.txt")
	snap("REUC")
	r.git("update-index", "--untracked-cache")
	r.git("status", "--porcelain")
	snap("UNTR")
	r.git("-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true",
		"-c", "index.threads=2", "update-index", "--index-version", "4")
	snap("EOIE+IEOT")
	r.git("read-tree", "--empty")
	snap("empty")
	r.git("read-tree", "HEAD")
	r.git("update-index", "--split-index")
	snap("split index")
	return shapes
}

func TestDecodeIndexEqualsGoGit(t *testing.T) {
	shapes := indexShapes(t)
	for name, data := range shapes {
		if !sameAsGoGit(t, name, data) {
			continue
		}
		if name != "split index" {
			_, err := decodeIndexFastOK(data)
			assert.NoError(t, err, "%s: the fast path decodes it", name)
		}
		// Every truncation, and every byte changed (with the checksum made right again, so that
		// the parse itself is what is compared).
		for n := 0; n < len(data); n += 1 + n/256 { // every length at first, then fewer
			if !sameAsGoGit(t, name+" truncated", data[:n]) || !sameAsGoGit(t, name+" truncated, resummed", resum(bytes.Clone(data[:n]))) {
				break
			}
		}
		for i := 0; i < len(data)-sha1.Size; i++ {
			b := bytes.Clone(data)
			x := []byte{0x01, 0x80, 0xff}[i%3]
			b[i] ^= x
			if !sameAsGoGit(t, fmt.Sprintf("%s byte %d of %d ^%#x, resummed", name, i, len(data), x), resum(b)) {
				break
			}
		}
	}
}

// decodeIndexFastOK reports whether the fast path, not go-git's fallback, decoded data.
func decodeIndexFastOK(data []byte) (*index.Index, error) {
	idx, ok := decodeIndexFast(data)
	if !ok {
		return nil, assert.AnError
	}
	return idx, nil
}

func TestDecodeIndexRefusesWhatGoGitRefuses(t *testing.T) {
	shapes := indexShapes(t)
	for _, name := range []string{"split index"} {
		_, err := decodeIndex(shapes[name])
		assert.ErrorIs(t, err, index.ErrUnknownExtension, name)
	}
	b := bytes.Clone(shapes["v2+TREE"])
	b[len(b)-1] ^= 1
	_, err := decodeIndex(b)
	assert.ErrorIs(t, err, index.ErrInvalidChecksum)
	b = bytes.Clone(shapes["v2+TREE"])
	b[7] = 5 // version 5
	_, err = decodeIndex(resum(b))
	assert.ErrorIs(t, err, index.ErrUnsupportedVersion)
}

// FuzzDecodeIndexEqualsGoGit: on any bytes (with their checksum made right, so that the parse is
// reached), decodeIndex answers what go-git's decoder answers.
func FuzzDecodeIndexEqualsGoGit(f *testing.F) {
	var buf bytes.Buffer
	idx := &index.Index{Version: 2, Entries: []*index.Entry{{Name: "a.go", Size: 3}, {Name: "dir/b", Stage: 2}}}
	if err := index.NewEncoder(&buf).Encode(idx); err == nil {
		f.Add(buf.Bytes())
	}
	f.Add([]byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x00" + strings.Repeat("\x00", 20)))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsGoGit(t, "as given", data)
		sameAsGoGit(t, "resummed", resum(bytes.Clone(data)))
	})
}
