package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository root as seen from this package's directory (go test runs in cmd/).
const repoRoot = ".."

// TestCLIDocsAreCurrent regenerates the command reference and compares it with docs/cli, so a
// changed command, flag or help text cannot leave the reference behind.
func TestCLIDocsAreCurrent(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, writeCLIDocs(dir))
	committed := filepath.Join(repoRoot, "docs", "cli")
	hint := "docs/cli is stale: run `go run ./cmd/geas docs` (or `go generate ./cmd`) at the repository root and commit the result"

	want := markdownFiles(t, dir)
	got := markdownFiles(t, committed)
	assert.Equal(t, sortedKeys(want), sortedKeys(got), "the files of docs/cli differ from the command tree's; %s", hint)
	for name, fresh := range want {
		if old, ok := got[name]; ok && !bytes.Equal(fresh, old) {
			t.Errorf("docs/cli/%s differs from what the command tree generates (first difference at line %d); %s",
				name, firstDifferentLine(old, fresh), hint)
		}
	}
}

func markdownFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = b
	}
	return files
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func firstDifferentLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}
