package cmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchMention matches a script or program of bench/ named in bench/README.md: a link target of
// the index (mkrepo.sh, gitfacts/main.go) or a command in the text (bench/gitgit.sh,
// bench/pairtime).
var benchMention = regexp.MustCompile(`\]\(([a-z_]+\.sh|[a-z_]+(?:/[a-z_]+)?/main\.go)\)|\bbench/([a-z_]+(?:\.sh)?(?:/[a-z_]+)?)\b`)

// benchEntries are the scripts (NAME.sh) and programs (DIR, a directory holding Go files) under
// bench/.
func benchEntries(t *testing.T) map[string]bool {
	t.Helper()
	entries := map[string]bool{}
	root := filepath.Join(repoRoot, "bench")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
		case filepath.Ext(rel) == ".sh" && !strings.Contains(rel, "/"):
			entries[rel] = true
		case filepath.Ext(rel) == ".go" && strings.Contains(rel, "/"):
			entries[filepath.ToSlash(filepath.Dir(rel))] = true
		}
		return nil
	})
	require.NoError(t, err)
	return entries
}

// TestBenchIndexIsComplete: bench/README.md's index names every script and program under bench/,
// and every script or program the README names exists, so the index is what a newcomer can run.
func TestBenchIndexIsComplete(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "bench", "README.md"))
	require.NoError(t, err)
	entries := benchEntries(t)
	require.Contains(t, entries, "gitgit.sh", "bench/ has its scripts")
	require.Contains(t, entries, "pairtime", "bench/ has its programs")

	linked, named := map[string]bool{}, map[string]bool{}
	for _, m := range benchMention.FindAllStringSubmatch(string(b), -1) {
		name := m[1] + m[2]
		if dir, ok := strings.CutSuffix(name, "/main.go"); ok {
			name = dir
		}
		named[name] = true
		if m[1] != "" {
			linked[name] = true
		}
	}
	for name := range entries {
		assert.True(t, linked[name], "bench/%s has no line in bench/README.md's index (a link to it)", name)
	}
	for name := range named {
		if strings.HasPrefix(name, "startcost") && !strings.Contains(name, "/") {
			continue // the directory of startcost/empty and startcost/jsonschema
		}
		assert.True(t, entries[name], "bench/README.md names bench/%s, which is not a script or program", name)
	}
}
