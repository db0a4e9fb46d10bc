// Package layout holds TestImportRules, the test that keeps STYLE.md's dependency rules true: who
// may import go-git, os/exec, cobra and the MCP SDK, that nothing imports cmd, that contract,
// evidence and record do not import each other, that no package imports one on a higher floor, and
// that the test fixtures are imported by tests only.
package layout

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/geas-dev/geas"

// floors are the module's packages from the ground up: a package may import packages on its own
// floor or below, never above. A package missing here fails the test, so the rules stay complete.
var floors = map[string]int{
	"vocab": 0, "internal/canon": 0, "internal/fsutil": 0, "internal/proc": 0, "internal/jsonobj": 0,
	"internal/testresults": 0,
	"internal/text":        0,
	"internal/shellcmd":    0,
	"internal/jsonscan":    0,
	"internal/git":         1, "schemas": 1,
	"project":  2,
	"contract": 3, "evidence": 3, "record": 3, "policy": 3, "internal/demo": 3, "internal/testfixture": 3,
	"tiers": 4,
	"gate":  5, "report": 5,
	"cmd": 6, "bench/gitfacts": 6, "bench/difffacts": 6, "bench/wtcheck": 6, "bench/pairtime": 6,
	"bench/schemacompile": 6, "bench/walk": 6, "bench/startcost/empty": 6, "bench/startcost/jsonschema": 6, "bench/checkoutbench": 6,
	"cmd/geas":        7,
	"cmd/geasdocs":    7,
	"internal/layout": 7,
}

// apart are packages on one floor that must not import each other.
var apart = []string{"contract", "evidence", "record"}

// only names, for a third-party import path prefix, the packages allowed to import it in
// production code.
var only = map[string][]string{
	"github.com/go-git/":                     {"internal/git"},
	"os/exec":                                {"internal/proc"},
	"github.com/spf13/cobra":                 {"cmd", "cmd/geasdocs"}, // geasdocs: cobra/doc, kept out of geas
	"github.com/modelcontextprotocol/go-sdk": {"cmd"},
	"github.com/google/jsonschema-go":        {"cmd"}, // the MCP tools' output schemas
}

// testOnly are the packages only _test.go files may import: fixtures, never linked into geas.
var testOnly = []string{"internal/testfixture"}

// cmdImports are the only module packages cmd may import (STYLE.md "Commands are thin"): a
// command parses its flags, makes one call into gate and renders the result with report; the
// domain packages under gate reach it only through gate.
var cmdImports = []string{"gate", "report", "vocab", "project", "schemas", "internal/demo"}

// importsCmd are the commands that may import cmd: geas, and the reference generator.
var importsCmd = []string{"cmd/geas", "cmd/geasdocs"}

// importRuleProblems lists every broken rule in imports (package -> its direct non-test imports,
// module packages written relative to the module).
func importRuleProblems(imports map[string][]string) []string {
	var problems []string
	names := make([]string, 0, len(imports))
	for p := range imports {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		floor, ok := floors[p]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s has no floor in the import rules: add it to floors", p))
			continue
		}
		for _, imp := range imports[p] {
			problems = append(problems, importProblems(p, floor, imp)...)
		}
	}
	return problems
}

func importProblems(p string, floor int, imp string) []string {
	var problems []string
	for prefix, owners := range only {
		if (imp == prefix || strings.HasPrefix(imp, prefix)) && !slices.Contains(owners, p) {
			problems = append(problems, fmt.Sprintf("%s imports %s: only %s may", p, imp, strings.Join(owners, " and ")))
		}
	}
	rel, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return problems
	}
	if rel == "cmd" && !slices.Contains(importsCmd, p) {
		problems = append(problems, fmt.Sprintf("%s imports cmd: nothing but %s imports cmd", p, strings.Join(importsCmd, " and ")))
	}
	if slices.Contains(testOnly, rel) {
		problems = append(problems, fmt.Sprintf("%s imports %s: only _test.go files may", p, rel))
	}
	if p == "cmd" && !slices.Contains(cmdImports, rel) {
		problems = append(problems, fmt.Sprintf("cmd imports %s: cmd imports of this module only %s", rel, strings.Join(cmdImports, ", ")))
	}
	if f, known := floors[rel]; known && f > floor {
		problems = append(problems, fmt.Sprintf("%s (floor %d) imports %s (floor %d): dependencies point down", p, floor, rel, f))
	}
	if p != rel && slices.Contains(apart, p) && slices.Contains(apart, rel) {
		problems = append(problems, fmt.Sprintf("%s imports %s: contract, evidence and record do not import each other", p, rel))
	}
	return problems
}

// moduleImports runs go list over the module for one GOOS: each package's direct imports in its
// non-test files for that system.
func moduleImports(t *testing.T, goos string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...")
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("GOOS=%s go list: %v: %s", goos, err, stderr.Bytes())
	}
	imports := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		p, ok := strings.CutPrefix(fields[0], module+"/")
		if !ok {
			continue
		}
		imports[p] = fields[1:]
	}
	return imports
}

// TestImportRules checks the rules on the code each supported system builds (SPEC §11).
func TestImportRules(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		imports := moduleImports(t, goos)
		if len(imports) < 10 {
			t.Fatalf("GOOS=%s go list found %d packages: %v", goos, len(imports), imports)
		}
		for _, problem := range importRuleProblems(imports) {
			t.Errorf("GOOS=%s: %s", goos, problem)
		}
	}
}

// TestImportRulesCatchABreak: each kind of broken rule is reported.
func TestImportRulesCatchABreak(t *testing.T) {
	tests := []struct {
		name    string
		imports map[string][]string
		want    string
	}{
		{"go-git outside internal/git", map[string][]string{"tiers": {"github.com/go-git/go-git/v5"}}, "tiers imports github.com/go-git/go-git/v5: only internal/git may"},
		{"os/exec outside internal/proc", map[string][]string{"gate": {"os/exec"}}, "gate imports os/exec: only internal/proc may"},
		{"cobra outside cmd", map[string][]string{"report": {"github.com/spf13/cobra"}}, "only cmd and cmd/geasdocs may"},
		{"the MCP SDK outside cmd", map[string][]string{"gate": {"github.com/modelcontextprotocol/go-sdk/mcp"}}, "only cmd may"},
		{"importing cmd", map[string][]string{"bench/wtcheck": {module + "/cmd"}}, "imports cmd: nothing but"},
		{"a higher floor", map[string][]string{"record": {module + "/tiers"}}, "record (floor 3) imports tiers (floor 4)"},
		{"record and contract", map[string][]string{"record": {module + "/contract"}}, "do not import each other"},
		{"a test fixture in production code", map[string][]string{"gate": {module + "/internal/testfixture"}}, "gate imports internal/testfixture: only _test.go files may"},
		{"an unknown package", map[string][]string{"newpkg": {"fmt"}}, "newpkg has no floor"},
		{"cmd past gate", map[string][]string{"cmd": {module + "/tiers"}}, "cmd imports tiers: cmd imports of this module only"},
		{"cmd past gate to a helper", map[string][]string{"cmd": {module + "/internal/fsutil"}}, "cmd imports internal/fsutil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems := importRuleProblems(tc.imports)
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Errorf("problems %q do not report %q", problems, tc.want)
			}
		})
	}
	if p := importRuleProblems(map[string][]string{"gate": {module + "/tiers", "os"}, "internal/git": {"github.com/go-git/go-git/v5"},
		"cmd": {module + "/gate", module + "/report", "github.com/spf13/cobra"}}); len(p) > 0 {
		t.Errorf("allowed imports reported: %q", p)
	}
}
