package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// indirectEnv are the standard library calls that read environment variables on the caller's
// behalf, with the variables each reads (on Linux and macOS).
var indirectEnv = map[string][]string{
	"os.UserHomeDir":       {"HOME"},
	"os.UserCacheDir":      {"XDG_CACHE_HOME", "HOME"},
	"os.UserConfigDir":     {"XDG_CONFIG_HOME", "HOME"},
	"os.TempDir":           {"TMPDIR"},
	"exec.Command":         {"PATH"},
	"exec.CommandContext":  {"PATH"},
	"exec.LookPath":        {"PATH"},
	"os.ExpandEnv":         {"(any)"},
	"os.Environ":           {"(all)"},
	"os.MkdirTemp(\"\")":   {"TMPDIR"},
	"os.CreateTemp(\"\")":  {"TMPDIR"},
	"user.Current":         {"USER", "HOME"},
	"os.Getenv(non-const)": {"(unknown)"},
}

// environPackages are the packages allowed to pass the whole environment on (os.Environ): the
// process runner, whose filtering docs/environment.md describes.
var environPackages = []string{"internal/proc"}

// envVarCell matches the first cell of a table row of docs/environment.md: | `NAME`, `NAME2` | ...
var envVarCell = regexp.MustCompile("(?m)^\\| (`[A-Z][A-Z0-9_]*`(?:, `[A-Z][A-Z0-9_]*`)*) \\|")

// envVarName matches one name of such a cell.
var envVarName = regexp.MustCompile("`([A-Z][A-Z0-9_]*)`")

// TestEveryEnvironmentVariableIsDocumented fails when the module's code (not its tests, not the
// bench tools) reads an environment variable that docs/environment.md does not list in a table
// row, directly (os.Getenv, os.LookupEnv, with a literal, a constant, or a range over literals)
// or through a standard library call that reads one (os.UserCacheDir, os.MkdirTemp("", ...),
// exec.Command's PATH lookup, ...); when a call names a variable the scan cannot resolve; when a
// package other than the process runner passes the whole environment on; and when the page lists
// a GEAS_ variable that nothing reads any more (neither the module nor the plugin's launcher).
func TestEveryEnvironmentVariableIsDocumented(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "environment.md"))
	require.NoError(t, err)
	listed := map[string]bool{}
	for _, cell := range envVarCell.FindAllStringSubmatch(string(page), -1) {
		for _, m := range envVarName.FindAllStringSubmatch(cell[1], -1) {
			listed[m[1]] = true
		}
	}
	require.NotEmpty(t, listed, "docs/environment.md lists no variable in a table row (| `NAME` | ...)")

	require.Contains(t, listed, "GOMEMLIMIT", "a row naming two variables lists both")

	reads := envReads(t)
	require.Contains(t, reads, "GEAS_GATE_KEY", "the scan missed the signing key: it is broken")
	require.Contains(t, reads, "GEAS_HOLDOUT_LOGS", "the scan missed a constant of another package: it is broken")
	require.Contains(t, reads, "GIT_CONFIG_GLOBAL", "the scan missed a range over literals: it is broken")
	for _, name := range sortedKeys(reads) {
		where := reads[name]
		switch {
		case name == "(unknown)":
			t.Errorf("%s read an environment variable whose name the scan cannot resolve: name it with a string constant or literal", strings.Join(where, ", "))
		case name == "(any)":
			t.Errorf("%s expand arbitrary environment variables: list what they can read in docs/environment.md and teach this test", strings.Join(where, ", "))
		case name == "(all)":
			for _, w := range where {
				if !allowedEnviron(w) {
					t.Errorf("%s passes the whole environment on: describe what it passes in docs/environment.md and add its package to environPackages", w)
				}
			}
		case !listed[name]:
			t.Errorf("%s read $%s, which docs/environment.md does not list (add a row: | `%s` | what it does | default |)", strings.Join(where, ", "), name, name)
		}
	}
	launcher, err := os.ReadFile(filepath.Join(repoRoot, "bin", "geas-plugin"))
	require.NoError(t, err)
	for name := range listed {
		if !strings.HasPrefix(name, "GEAS_") || strings.HasSuffix(name, "_ACTIVE_HELP") || strings.HasSuffix(name, "_COMPLETION_DESCRIPTIONS") {
			continue // cobra's, which the scan of this module does not see
		}
		if reads[name] == nil && !strings.Contains(string(launcher), "$"+name) {
			t.Errorf("docs/environment.md lists $%s, which no code of the module reads", name)
		}
	}
}

func allowedEnviron(where string) bool {
	for _, p := range environPackages {
		if strings.HasPrefix(where, p+"/") {
			return true
		}
	}
	return false
}

// envReads scans the non-test Go files of the module (bench/ and testdata left out) and returns
// each environment variable read, with the file:line positions that read it.
func envReads(t *testing.T) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != repoRoot && (d.Name() == "testdata" || d.Name() == "docs" || d.Name() == "bench" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	require.NoError(t, err)

	consts := stringConsts(files)
	reads := map[string][]string{}
	add := func(name string, pos token.Pos) {
		p := fset.Position(pos)
		rel, err := filepath.Rel(repoRoot, p.Filename)
		require.NoError(t, err)
		reads[name] = append(reads[name], filepath.ToSlash(rel)+":"+strconv.Itoa(p.Line))
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			fn := pkg.Name + "." + sel.Sel.Name
			switch {
			case fn == "os.Getenv" || fn == "os.LookupEnv":
				names := envNames(f.Name.Name, call.Args[0], consts)
				if len(names) == 0 {
					names = indirectEnv["os.Getenv(non-const)"]
				}
				for _, name := range names {
					add(name, call.Pos())
				}
			case fn == "os.MkdirTemp" || fn == "os.CreateTemp":
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Value == `""` {
					for _, name := range indirectEnv[fn+`("")`] {
						add(name, call.Pos())
					}
				}
			default:
				for _, name := range indirectEnv[fn] {
					add(name, call.Pos())
				}
			}
			return true
		})
	}
	return reads
}

// stringConsts maps every string constant of the module, as "pkg.Name" (the package's name, as
// its importers write it), to its value; a constant defined as another constant
// (gate.SigningKeyEnv = record.SigningKeyEnv) is followed. A name two packages of the same name
// give different values maps to "" (unresolved, so the test says so).
func stringConsts(files []*ast.File) map[string]string {
	type def struct {
		pkg string
		e   ast.Expr
	}
	defs := map[string][]def{}
	for _, f := range files {
		pkg := f.Name.Name
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						defs[pkg+"."+name.Name] = append(defs[pkg+"."+name.Name], def{pkg, vs.Values[i]})
					}
				}
			}
		}
	}
	var resolve func(key string, depth int) string
	resolve = func(key string, depth int) string {
		vals := map[string]bool{}
		for _, d := range defs[key] {
			v := ""
			switch e := d.e.(type) {
			case *ast.BasicLit:
				v, _ = strconv.Unquote(e.Value)
			case *ast.Ident:
				if depth < 8 {
					v = resolve(d.pkg+"."+e.Name, depth+1)
				}
			case *ast.SelectorExpr:
				if x, ok := e.X.(*ast.Ident); ok && depth < 8 {
					v = resolve(x.Name+"."+e.Sel.Name, depth+1)
				}
			}
			vals[v] = true
		}
		if len(vals) != 1 {
			return ""
		}
		for v := range vals {
			return v
		}
		return ""
	}
	consts := map[string]string{}
	for key := range defs {
		consts[key] = resolve(key, 0)
	}
	return consts
}

// envNames resolves the variable name an os.Getenv argument of package pkg gives: a literal, a
// string constant (of this or another package), or the variable of a range over literals.
func envNames(pkg string, arg ast.Expr, consts map[string]string) []string {
	switch a := arg.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(a.Value); err == nil {
			return []string{s}
		}
	case *ast.SelectorExpr:
		if x, ok := a.X.(*ast.Ident); ok && consts[x.Name+"."+a.Sel.Name] != "" {
			return []string{consts[x.Name+"."+a.Sel.Name]}
		}
	case *ast.Ident:
		if a.Obj != nil && a.Obj.Kind == ast.Var {
			return rangeLiterals(pkg, a.Obj.Decl, consts)
		}
		if v := consts[pkg+"."+a.Name]; v != "" {
			return []string{v}
		}
	}
	return nil
}

// rangeLiterals returns the values of `for _, v := range []string{"A", "B"}` when decl is the
// declaration of such a v, else nil.
func rangeLiterals(pkg string, decl any, consts map[string]string) []string {
	as, ok := decl.(*ast.AssignStmt)
	if !ok || len(as.Rhs) != 1 {
		return nil
	}
	u, ok := as.Rhs[0].(*ast.UnaryExpr)
	if !ok || u.Op != token.RANGE {
		return nil
	}
	lit, ok := u.X.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var names []string
	for _, e := range lit.Elts {
		n := envNames(pkg, e, consts)
		if len(n) != 1 {
			return nil
		}
		names = append(names, n[0])
	}
	return names
}
