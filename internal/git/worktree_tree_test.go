package git

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/stretchr/testify/assert"
)

// sortedTreeHash is the index's tree id as it was computed before treeBuilder: each directory's
// items collected, then sorted by git's tree key (a tree's name as if it ended in "/"). It is the
// oracle of TestTreeBuilderEqualsSortingEachTree.
func sortedTreeHash(entries []*index.Entry, prefix int) (plumbing.Hash, int, bool) {
	type item struct {
		name string
		mode filemode.FileMode
		hash plumbing.Hash
	}
	var items []item
	i := 0
	for i < len(entries) {
		rest := entries[i].Name[prefix:]
		slash := strings.IndexByte(rest, '/')
		if slash < 0 {
			items = append(items, item{rest, entries[i].Mode, entries[i].Hash})
			i++
			continue
		}
		dir := entries[i].Name[:prefix+slash+1]
		j := i
		for j < len(entries) && strings.HasPrefix(entries[j].Name, dir) {
			j++
		}
		sub, n, ok := sortedTreeHash(entries[i:j], len(dir))
		if !ok || n != j-i {
			return plumbing.ZeroHash, 0, false
		}
		items = append(items, item{rest[:slash], filemode.Dir, sub})
		i = j
	}
	key := func(it item) string {
		if it.mode == filemode.Dir {
			return it.name + "/"
		}
		return it.name
	}
	slices.SortStableFunc(items, func(a, b item) int { return strings.Compare(key(a), key(b)) })
	var buf bytes.Buffer
	for k, it := range items {
		if k > 0 && items[k-1].name == it.name {
			return plumbing.ZeroHash, 0, false
		}
		buf.WriteString(strconv.FormatUint(uint64(it.mode), 8))
		buf.WriteByte(' ')
		buf.WriteString(it.name)
		buf.WriteByte(0)
		buf.Write(it.hash[:])
	}
	return plumbing.ComputeHash(plumbing.TreeObject, buf.Bytes()), i, true
}

// The tree ids treeBuilder computes without sorting are those of sorting each directory's items by
// git's key, on names chosen to sit on every side of "/" in byte order ("a-b", "a.c" and "a0"
// around a directory "a"), with files and directories of the same name, and duplicates.
func TestTreeBuilderEqualsSortingEachTree(t *testing.T) {
	parts := []string{"a", "a-b", "a.c", "a0", "b", "a/", "a-b/", "a0/", "a/x", "ab"}
	rng := rand.New(rand.NewPCG(1, 2))
	agreeOK, agreeRefused := 0, 0
	for range 20000 {
		var entries []*index.Entry
		for range 1 + rng.IntN(6) {
			name := parts[rng.IntN(len(parts))]
			for strings.HasSuffix(name, "/") || rng.IntN(3) == 0 {
				name += parts[rng.IntN(len(parts))]
			}
			name = strings.TrimSuffix(name, "/")
			if !validIndexPath(name) {
				continue
			}
			e := &index.Entry{Name: name, Mode: filemode.Regular}
			e.Hash[0] = byte(rng.IntN(4))
			if rng.IntN(5) == 0 {
				e.Mode = filemode.Executable
			}
			entries = append(entries, e)
		}
		slices.SortStableFunc(entries, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
		wantH, wantN, wantOK := sortedTreeHash(entries, 0)
		gotH, gotN, gotOK := (&treeBuilder{}).build(entries, 0, 0)
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name
		}
		if !assert.Equal(t, wantOK, gotOK, "%q", names) {
			return
		}
		if wantOK {
			agreeOK++
			if !assert.Equal(t, wantH, gotH, "%q", names) || !assert.Equal(t, wantN, gotN, "%q", names) {
				return
			}
		} else {
			agreeRefused++
		}
	}
	assert.Greater(t, agreeOK, 1000, "trees built")
	assert.Greater(t, agreeRefused, 1000, "trees refused (a file and a directory of the same name, duplicates)")
}

// splitValidIndexPath is validIndexPath as it was written before the byte loop, the oracle of
// TestValidIndexPathEqualsSplitting.
func splitValidIndexPath(p string) bool {
	if p == "" || strings.ContainsRune(p, 0) || strings.HasPrefix(p, "/") {
		return false
	}
	for part := range strings.SplitSeq(p, "/") {
		if part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") {
			return false
		}
	}
	return true
}

// validIndexPath answers what splitting the path into components answered, on paths built from
// the pieces that matter (slashes, dots, .git in any case, NUL, a Kelvin sign that folds to k).
func TestValidIndexPathEqualsSplitting(t *testing.T) {
	pieces := []string{"/", ".", "..", ".git", ".GIT", ".Git", ".gi", ".gitx", "a", "\x00", "\u212a", "..a", ". ", "git"}
	rng := rand.New(rand.NewPCG(3, 4))
	valid, invalid := 0, 0
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(7) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		p := b.String()
		want := splitValidIndexPath(p)
		if !assert.Equal(t, want, validIndexPath(p), "%q", p) {
			return
		}
		if want {
			valid++
		} else {
			invalid++
		}
	}
	assert.Greater(t, valid, 5000)
	assert.Greater(t, invalid, 5000)
}

// appendTreeMode spells every mode as strconv does in octal, the usual ones and any other.
func TestAppendTreeModeIsOctal(t *testing.T) {
	for _, m := range []filemode.FileMode{filemode.Regular, filemode.Executable, filemode.Symlink, filemode.Dir,
		filemode.Submodule, filemode.Deprecated, filemode.Empty, 0o100600, 0o777} {
		assert.Equal(t, strconv.FormatUint(uint64(m), 8), string(appendTreeMode(nil, m)), "%o", m)
	}
}
