package cmd

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra/doc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository root as seen from this package's directory (go test runs in cmd/).
const repoRoot = ".."

// TestCLIDocsAreCurrent regenerates the command reference and compares it with docs/cli, so a
// changed command, flag or help text cannot leave the reference behind.
func TestCLIDocsAreCurrent(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteCLIDocs(dir, doc.GenMarkdownTree))
	committed := filepath.Join(repoRoot, "docs", "cli")
	hint := "docs/cli is stale: run `go run ./cmd/geasdocs` (or `go generate ./cmd`) at the repository root and commit the result"

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

func sortedKeys[V any](m map[string]V) []string {
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

// TestDocsSpecIsTheSharedSpec keeps docs/spec.md a copy of the specification the project is
// steered by, ../shared/SPEC.md beside the repository. CI has only the repository: there the
// test is skipped.
func TestDocsSpecIsTheSharedSpec(t *testing.T) {
	shared, err := os.ReadFile(filepath.Join(repoRoot, "..", "shared", "SPEC.md"))
	if os.IsNotExist(err) {
		t.Skip("no ../shared/SPEC.md beside the repository")
	}
	require.NoError(t, err)
	copied, err := os.ReadFile(filepath.Join(repoRoot, "docs", "spec.md"))
	require.NoError(t, err)
	if !bytes.Equal(shared, copied) {
		t.Errorf("docs/spec.md differs from ../shared/SPEC.md (first difference at line %d): cp ../shared/SPEC.md docs/spec.md",
			firstDifferentLine(copied, shared))
	}
}

// docFiles are the Markdown files whose links TestDocsLinksResolve checks.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", filepath.Join("bench", "README.md")}
	for _, dir := range []string{"docs", filepath.Join("docs", "cli")} {
		matches, err := filepath.Glob(filepath.Join(repoRoot, dir, "*.md"))
		require.NoError(t, err)
		require.NotEmpty(t, matches, "no Markdown files in %s", dir)
		for _, m := range matches {
			rel, err := filepath.Rel(repoRoot, m)
			require.NoError(t, err)
			files = append(files, rel)
		}
	}
	return files
}

// mdLink matches an inline Markdown link or image target: [text](target) or [text](target "title").
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestDocsLinksResolve checks that every relative link of the README, bench/README.md and docs/
// points at a file or directory of the repository.
func TestDocsLinksResolve(t *testing.T) {
	checked := 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, file))
		require.NoError(t, err)
		for i, line := range strings.Split(stripCodeBlocks(string(b)), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
					continue
				}
				target, fragment, _ := strings.Cut(target, "#")
				path := filepath.Join(repoRoot, filepath.Dir(file), filepath.FromSlash(target))
				_, err := os.Stat(path)
				checked++
				if !assert.NoError(t, err, "%s:%d links to %s, which does not exist", file, i+1, m[1]) || fragment == "" {
					continue
				}
				heads, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Contains(t, headingAnchors(string(heads)), fragment, "%s:%d links to %s, which has no such heading", file, i+1, m[1])
			}
		}
	}
	assert.Greater(t, checked, 20, "the docs link to each other; so few links means the link pattern is broken")
}

// headingAnchors returns the anchors GitHub gives the headings of a Markdown file: lower case,
// punctuation dropped, spaces as hyphens, and -1, -2, ... on repeats.
func headingAnchors(md string) []string {
	var anchors []string
	seen := map[string]int{}
	for _, line := range strings.Split(stripCodeBlocks(md), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors = append(anchors, fmt.Sprintf("%s-%d", a, n))
		} else {
			anchors = append(anchors, a)
		}
		seen[a]++
	}
	return anchors
}

// stripCodeBlocks blanks fenced code blocks (keeping the line count), where ](x) is code, not a link.
func stripCodeBlocks(s string) string {
	lines := strings.Split(s, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

// TestEveryCauseIsDocumented fails when a cause code, verdict or next action the code can produce
// is missing from docs/verdicts-and-causes.md. The codes are read from the module's source: every
// string constant named Cause*, Verdict* or Next*, and every code given as a literal to a warning.
func TestEveryCauseIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "verdicts-and-causes.md"))
	require.NoError(t, err)
	codes := sourceCodes(t)
	require.GreaterOrEqual(t, len(codes), 40, "the source scan found too few codes: %v", codes)
	var missing []string
	for _, code := range codes {
		if !strings.Contains(string(doc), "`"+code+"`") {
			missing = append(missing, code)
		}
	}
	assert.Empty(t, missing, "docs/verdicts-and-causes.md does not document these codes (each written as `code`)")
}

// sourceCodes returns the cause codes, verdicts and next actions written in non-test Go files.
func sourceCodes(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "docs" || strings.HasPrefix(d.Name(), ".") && path != repoRoot) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i < len(n.Values) && isCodeName(name.Name) {
						addLiteral(seen, n.Values[i])
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "warnCheck" && len(n.Args) > 0 {
					addLiteral(seen, n.Args[len(n.Args)-1])
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	codes := make([]string, 0, len(seen))
	for c := range seen {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	return codes
}

func isCodeName(name string) bool {
	for _, prefix := range []string{"Cause", "Verdict", "Next"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && rest != "" && rest[0] >= 'A' && rest[0] <= 'Z' {
			return true
		}
	}
	return false
}

func addLiteral(seen map[string]bool, e ast.Expr) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return
	}
	if s, err := strconv.Unquote(lit.Value); err == nil && s != "" {
		seen[s] = true
	}
}

// TestReadmeIsForNewcomers keeps the README short and its first steps exact: the install line and
// the two set-up commands of a fresh clone.
func TestReadmeIsForNewcomers(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	readme := string(b)
	assert.LessOrEqual(t, strings.Count(readme, "\n"), 250, "the README is for newcomers; reference goes to docs/")
	for _, want := range []string{
		"go install github.com/geas-dev/geas/cmd/geas@latest",
		"go run ./cmd/geas demo",
		"go test ./...",
	} {
		assert.Contains(t, readme, want)
	}
	for _, labNote := range []string{"load average", "Oxide", "peak RSS"} {
		assert.NotContains(t, readme, labNote, "measurements belong in bench/README.md")
	}
}
