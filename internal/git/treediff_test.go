package git

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawTree builds the bytes of a tree object from "mode name" pairs, each with id fill.
func rawTree(entries ...string) []byte {
	var b bytes.Buffer
	for i, e := range entries {
		mode, name, _ := strings.Cut(e, " ")
		b.WriteString(mode + " " + name + "\x00")
		b.Write(bytes.Repeat([]byte{byte(i + 1)}, 20))
	}
	return b.Bytes()
}

func TestParseTreeEntries(t *testing.T) {
	t.Parallel()
	id := plumbing.NewHash("1234567890123456789012345678901234567890")
	got, err := parseTreeEntries(id, rawTree("100664 a-b", "100755 a.b", "40000 a", "160000 a0",
		"120000 b", "040000 c", "100744 x"), nil)
	require.NoError(t, err)
	var modes []filemode.FileMode
	var names []string
	for _, e := range got {
		modes, names = append(modes, e.mode), append(names, string(e.name))
	}
	assert.Equal(t, []string{"a-b", "a.b", "a", "a0", "b", "c", "x"}, names)
	assert.Equal(t, []filemode.FileMode{filemode.Regular, filemode.Executable, filemode.Dir,
		filemode.Submodule, filemode.Symlink, filemode.Dir, filemode.Executable}, modes,
		"modes canonical as git reads them: 100664 is 100644, 100744 is 100755, 040000 is 40000")
	assert.Equal(t, plumbing.Hash(bytes.Repeat([]byte{3}, 20)), got[2].hash)

	empty, err := parseTreeEntries(id, nil, nil)
	require.NoError(t, err)
	assert.Empty(t, empty)

	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"no space", []byte("100644"), "no space after the mode"},
		{"bad mode digit", rawTree("100844 a"), `bad mode "100844"`},
		{"empty mode", rawTree(" a"), `bad mode ""`},
		{"mode too long", rawTree("00000100644 a"), "bad mode"},
		{"unknown type", rawTree("170000 a"), `bad mode "170000"`},
		{"zero mode", rawTree("0 a"), `bad mode "0"`},
		{"no NUL", []byte("100644 a"), "no NUL after the name"},
		{"short id", append(rawTree("100644 a"), []byte("100644 b\x00short")...), "object id of 5 bytes, not 20"},
		{"empty name", rawTree("100644 "), "empty name"},
		{"slash in name", rawTree("100644 a/b"), `bad name "a/b"`},
		{"dot", rawTree("40000 ."), `bad name "."`},
		{"dot dot", rawTree("40000 .."), `bad name ".."`},
		{"unsorted", rawTree("100644 b", "100644 a"), `name "a" out of order after "b"`},
		{"dir sorts as name/", rawTree("40000 a", "100644 a-b"), `name "a-b" out of order after "a"`},
		{"duplicate", rawTree("100644 a", "100755 a"), `name "a" repeated`},
		{"duplicate dir", rawTree("40000 a", "40000 a"), `name "a" repeated`},
		{"file and dir", rawTree("100644 a", "100644 a-b", "100644 a.b", "40000 a"), `name "a" repeated (a file and a directory)`},
		{"gitlink and dir", rawTree("160000 a", "40000 a"), `name "a" repeated (a file and a directory)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTreeEntries(id, tc.data, nil)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
			assert.ErrorContains(t, err, "tree "+id.String(), "the error names the tree")
		})
	}
}

// The file of a name may be followed by the same name as a directory only with the names between
// them; a directory named like an earlier file's prefix is not a duplicate.
func TestParseTreeEntriesPrefixNames(t *testing.T) {
	t.Parallel()
	_, err := parseTreeEntries(plumbing.ZeroHash, rawTree("100644 ab", "40000 a"), nil)
	assert.ErrorContains(t, err, "out of order", `"a/" sorts before "ab"`)
	_, err = parseTreeEntries(plumbing.ZeroHash, rawTree("40000 a", "100644 ab", "40000 abc"), nil)
	assert.NoError(t, err)
	_, err = parseTreeEntries(plumbing.ZeroHash, rawTree("100644 a!", "100644 a-", "40000 a"), nil)
	assert.NoError(t, err, "no file named a")
}

func FuzzTreeEntries(f *testing.F) {
	for _, seed := range [][]byte{
		rawTree("100644 a", "100664 a-b", "40000 a", "160000 a0", "120000 b"),
		rawTree("100644 a", "40000 a"),
		rawTree("40000 a", "40000 a"),
		[]byte("100644 a\x00short"),
		[]byte("100644"),
		[]byte("7 \x00"),
		{},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseTreeEntries(plumbing.ZeroHash, data, nil)
		if err != nil {
			return
		}
		// What parses is a valid tree: strictly ordered, unique names, and it round-trips
		// through the canonical encoding.
		var b bytes.Buffer
		seen := map[string]bool{}
		for i, e := range entries {
			require.NotEmpty(t, e.name)
			require.False(t, seen[string(e.name)], "name %q twice", e.name)
			seen[string(e.name)] = true
			if i > 0 {
				require.Negative(t, compareEntries(entries[i-1], e))
			}
			fmt.Fprintf(&b, "%o %s\x00", uint32(e.mode), e.name)
			b.Write(e.hash[:])
		}
		again, err := parseTreeEntries(plumbing.ZeroHash, b.Bytes(), nil)
		require.NoError(t, err)
		require.Equal(t, entries, again)
	})
}

// A tree written by hand (git hash-object --literally): modes git canonicalizes compare equal, as
// in git diff; a broken tree is an error naming it, never a panic or a silent answer.
func TestChangedFilesRawTrees(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	blob := r.gitStdin([]byte("content\n"), "hash-object", "-w", "--stdin")
	other := r.gitStdin([]byte("other\n"), "hash-object", "-w", "--stdin")
	tree := func(entries ...string) string {
		var b bytes.Buffer
		for _, e := range entries {
			mode, rest, _ := strings.Cut(e, " ")
			name, obj, _ := strings.Cut(rest, " ")
			b.WriteString(mode + " " + name + "\x00")
			h := plumbing.NewHash(obj)
			b.Write(h[:])
		}
		return r.gitStdin(b.Bytes(), "hash-object", "-t", "tree", "--literally", "-w", "--stdin")
	}
	commit := func(tree string) string { return r.git("commit-tree", tree, "-m", "c") }
	base := commit(tree("100644 f "+blob, "100644 g "+blob))
	head := commit(tree("100664 f "+blob, "100644 g "+other))
	repo := r.open()
	got, err := repo.ChangedFiles(base, head)
	require.NoError(t, err)
	assert.Equal(t, gitNameOnly(t, r, base, head), got)
	assert.Equal(t, []string{"g"}, got, "100664 and 100644 are the same mode for git")

	unsorted := tree("100644 g "+blob, "100644 f "+blob)
	bad := commit(unsorted)
	_, err = repo.ChangedFiles(base, bad)
	assert.ErrorContains(t, err, "tree "+unsorted)
	assert.ErrorContains(t, err, `name "f" out of order after "g"`)
	_, _, err = repo.AddedLines(base, bad)
	assert.ErrorContains(t, err, "tree "+unsorted)

	notTree := commit(tree("40000 d " + blob))
	_, err = repo.ChangedFiles(base, notTree)
	assert.ErrorContains(t, err, "object "+blob+" is a blob, not a tree")
}

func (r *gitRepo) gitStdin(stdin []byte, args ...string) string {
	r.t.Helper()
	var stderr bytes.Buffer
	cmd := r.cmd("", stdin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(r.t, err, "git %s: %s", strings.Join(args, " "), stderr.String())
	return strings.TrimSpace(string(out))
}

// gitNameOnly is `git diff -z --name-only --no-renames base head`, split.
func gitNameOnly(t *testing.T, r *gitRepo, base, head string) []string {
	t.Helper()
	var paths []string
	for p := range strings.SplitSeq(r.git("diff", "-z", "--name-only", "--no-renames", base, head), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths
}

// fastImportPath quotes a path for git fast-import (C style; UTF-8 bytes as they are).
func fastImportPath(p string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestChangedFilesMatchesGit compares ChangedFiles with the git CLI over many commit pairs of a
// generated history: adds, deletes, renames, mode changes, file<->directory and file<->symlink
// swaps, submodule entries, and names that sort differently as a file and as a directory.
func TestChangedFilesMatchesGit(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	rng := rand.New(rand.NewPCG(12, 13))
	const commits = 60
	stream := fastImportHistory(rng, commits)
	r.gitStdin(stream, "fast-import", "--quiet")
	raw := r.git("log", "--raw", "--no-renames", "--format=", "main")
	for _, kind := range []string{" 160000 ", " 120000 ", " 100755 ", " T\t", " D\t"} {
		require.Contains(t, raw, kind, "the history has gitlinks, symlinks, executables, type changes, deletions")
	}
	shas := strings.Fields(r.git("rev-list", "--reverse", "main"))
	require.Len(t, shas, commits)
	repo := r.open()

	pairs := [][2]int{{0, commits - 1}, {commits - 1, 0}, {5, 5}}
	for range 60 {
		pairs = append(pairs, [2]int{rng.IntN(commits), rng.IntN(commits)})
	}
	for i := range commits - 1 {
		pairs = append(pairs, [2]int{i, i + 1})
	}
	nonEmpty := 0
	for _, p := range pairs {
		base, head := shas[p[0]], shas[p[1]]
		got, err := repo.ChangedFiles(base, head)
		require.NoError(t, err)
		want := gitNameOnly(t, r, base, head)
		require.Equal(t, want, got, "commits %d..%d", p[0], p[1])
		if len(got) > 0 {
			nonEmpty++
		}
	}
	assert.Greater(t, nonEmpty, len(pairs)/2, "the pairs differ")

	// The added lines of the same pairs come from the same diff: the paths they name are
	// changed files (renames aside, which ChangedFiles lists on both sides).
	for _, p := range pairs[:10] {
		base, head := shas[p[0]], shas[p[1]]
		files, err := repo.ChangedFiles(base, head)
		require.NoError(t, err)
		added, _, err := repo.AddedLines(base, head)
		require.NoError(t, err)
		for _, l := range added {
			_, found := slices.BinarySearch(files, l.Path)
			assert.True(t, found, "%s is not a changed file of %d..%d", l.Path, p[0], p[1])
		}
	}
}

// historyGen writes a git fast-import stream of random commits on main, on names that sort
// differently as files and as directories, keeping a model of the tree to avoid conflicts.
type historyGen struct {
	rng      *rand.Rand
	segments []string
	pool     []string
	tree     map[string]genFile
	stream   bytes.Buffer
}

type genFile struct{ mode, data string }

// fastImportHistory returns the stream of commits commits, each with one to six operations.
func fastImportHistory(rng *rand.Rand, commits int) []byte {
	g := &historyGen{rng: rng, tree: map[string]genFile{},
		segments: []string{"a", "a-b", "a.b", "a0", "a b", "b", "ünï", "日本", "tab\tx", "Z", `q"q`, `back\slash`, "ſ", "K"}}
	for range 80 {
		parts := make([]string, 1+rng.IntN(3))
		for i := range parts {
			parts[i] = g.segments[rng.IntN(len(g.segments))]
		}
		g.pool = append(g.pool, strings.Join(parts, "/"))
	}
	for c := 1; c <= commits; c++ {
		fmt.Fprintf(&g.stream, "commit refs/heads/main\ncommitter F <f@example.com> %d +0000\ndata 2\nc\n", fixtureEpoch+c)
		if c == 1 {
			g.stream.WriteString("deleteall\n")
		}
		for range 1 + rng.IntN(6) {
			g.op()
		}
	}
	return g.stream.Bytes()
}

// set writes path p, first deleting what conflicts: p's parents as files, p as a directory.
func (g *historyGen) set(p string, f genFile) {
	for q := range g.tree {
		if strings.HasPrefix(p, q+"/") || strings.HasPrefix(q, p+"/") {
			g.del(q)
		}
	}
	g.tree[p] = f
	if f.mode == "160000" {
		fmt.Fprintf(&g.stream, "M 160000 %s %s\n", f.data, fastImportPath(p))
	} else {
		fmt.Fprintf(&g.stream, "M %s inline %s\ndata %d\n%s\n", f.mode, fastImportPath(p), len(f.data), f.data)
	}
}

func (g *historyGen) del(p string) {
	delete(g.tree, p)
	fmt.Fprintf(&g.stream, "D %s\n", fastImportPath(p))
}

// pick returns an existing path, chosen in sorted order so that the stream is deterministic.
func (g *historyGen) pick() (string, genFile, bool) {
	if len(g.tree) == 0 {
		return "", genFile{}, false
	}
	paths := make([]string, 0, len(g.tree))
	for p := range g.tree {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	p := paths[g.rng.IntN(len(paths))]
	return p, g.tree[p], true
}

// op applies one random operation.
func (g *historyGen) op() {
	anyPath := func() string { return g.pool[g.rng.IntN(len(g.pool))] }
	switch g.rng.IntN(8) {
	case 0, 1: // add or modify
		g.set(anyPath(), genFile{"100644", fmt.Sprintf("v%d\n", g.rng.IntN(5))})
	case 2: // delete
		if p, _, ok := g.pick(); ok {
			g.del(p)
		}
	case 3: // rename, content unchanged
		if p, f, ok := g.pick(); ok {
			g.del(p)
			g.set(anyPath(), f)
		}
	case 4: // mode change only (a symlink becomes a file)
		if p, f, ok := g.pick(); ok && f.mode != "160000" {
			f.mode = map[string]string{"100644": "100755", "100755": "100644", "120000": "100644"}[f.mode]
			g.set(p, f)
		}
	case 5: // symlink
		g.set(anyPath(), genFile{"120000", "target/" + g.segments[g.rng.IntN(len(g.segments))]})
	case 6: // submodule entry
		g.set(anyPath(), genFile{"160000", fmt.Sprintf("%040x", g.rng.IntN(4)+1)})
	case 7: // a file below an existing file: a file<->directory swap
		if p, _, ok := g.pick(); ok {
			g.set(p+"/"+g.segments[g.rng.IntN(len(g.segments))], genFile{"100644", "below\n"})
		}
	}
}
