// Command walk follows the task id through one gate run and reports the files it enters, phase by
// phase, and every return to a file it entered before and has since left.
//
// It walks the static call tree from a root function (gate.Run) in source order, following only
// calls into module packages above the floor (internal/, schemas and vocab are the ground the walk
// does not descend into) whose receiver or arguments carry the task id: a value of one of the
// -types (project.Task, tiers.Snapshot), an identifier of one of the -names, the root's
// parameters, and locals assigned from such expressions. With -profile (a coverage profile of a
// real run, in `go tool covdata textfmt` form) it follows only call sites that executed. A callee
// whose body is one statement and calls no module function is an accessor, not a step
// (-skip-trivial). bench/walk.sh builds the profile from the demo and runs it.
//
// Phases are anchored on the functions gate.Run calls (phaseOf): lock (the task's lock and the
// crash completion), snapshot, evaluate, ledger. A file entry is a call into a file other than the
// caller's own and the one the caller entered last; an entry is a return when the walk entered
// that file before and has left it (it is not on the call stack).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

type pkgInfo struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Standard   bool
}

const mod = "github.com/geas-dev/geas/"

var floor = []string{mod + "internal/", mod + "schemas", mod + "vocab"}

func isFloor(p string) bool {
	for _, f := range floor {
		if strings.HasPrefix(p, f) {
			return true
		}
	}
	return false
}

type fn struct {
	file string
	decl *ast.FuncDecl
	info *types.Info
}

var (
	fset     = token.NewFileSet()
	funcs    = map[string]*fn{}
	expanded = map[string]bool{}
	root     string
	taintT   = map[string]bool{}
	taintN   = map[string]bool{}
	maxDepth = 60
)

func main() {
	dir := flag.String("dir", ".", "module dir")
	start := flag.String("root", mod+"gate.Run", "root func")
	verbose := flag.Bool("v", false, "print the walk, one line per file entry")
	list := flag.String("list", "", "the output of `go list -deps -export -json ./cmd` (packages and their export data)")
	types_ := flag.String("types", "", "taint type names, comma separated (pkg.Name)")
	names := flag.String("names", "", "taint identifier names, comma separated")
	flag.BoolVar(&skipTrivial, "skip-trivial", false, "skip callees whose body is one statement")
	prof := flag.String("profile", "", "coverage profile (textfmt): follow only executed call sites")
	flag.Parse()
	if *prof != "" {
		loadProfile(*prof)
	}
	root = *dir
	for _, t := range strings.Split(*types_, ",") {
		taintT[t] = true
	}
	for _, n := range strings.Split(*names, ",") {
		taintN[n] = true
	}
	in, err := os.Open(*list)
	if err != nil {
		panic(err)
	}
	defer in.Close()
	dec := json.NewDecoder(in)
	exports := map[string]string{}
	var mine []pkgInfo
	for {
		var p pkgInfo
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			panic(err)
		}
		exports[p.ImportPath] = p.Export
		if strings.HasPrefix(p.ImportPath, mod) {
			mine = append(mine, p)
		}
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	for _, p := range mine {
		var files []*ast.File
		for _, f := range p.GoFiles {
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.SkipObjectResolution)
			if err != nil {
				panic(err)
			}
			files = append(files, af)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		conf.Check(p.ImportPath, fset, files, info)
		for _, af := range files {
			for _, d := range af.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				obj, _ := info.Defs[fd.Name].(*types.Func)
				if obj == nil {
					continue
				}
				rel, _ := filepath.Rel(root, fset.Position(fd.Pos()).Filename)
				funcs[obj.FullName()] = &fn{file: rel, decl: fd, info: info}
			}
		}
	}
	f := funcs[*start]
	if f == nil {
		panic("no root " + *start)
	}
	nodes = append(nodes, node{0, f.file, strings.TrimPrefix(*start, mod)})
	expanded[*start] = true
	set := map[types.Object]bool{}
	for _, fl := range f.decl.Type.Params.List { // the root's inputs carry the task id
		for _, id := range fl.Names {
			if o := f.info.Defs[id]; o != nil {
				set[o] = true
			}
		}
	}
	walk(f, 1, set)
	analyze(os.Stdout, nodes, *verbose)
}

// propagate marks the locals assigned from tainted expressions, to a fixpoint.
func propagate(body *ast.BlockStmt, info *types.Info, set map[types.Object]bool) {
	for changed := true; changed; {
		changed = false
		mark := func(lhs []ast.Expr, rhs []ast.Expr) {
			hit := false
			for _, r := range rhs {
				if exprTainted(r, info, set) {
					hit = true
				}
			}
			if !hit {
				return
			}
			for _, l := range lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				o := info.Defs[id]
				if o == nil {
					o = info.Uses[id]
				}
				if o != nil && !set[o] {
					set[o] = true
					changed = true
				}
			}
		}
		ast.Inspect(body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.AssignStmt:
				mark(x.Lhs, x.Rhs)
			case *ast.ValueSpec:
				var l []ast.Expr
				for _, id := range x.Names {
					l = append(l, id)
				}
				mark(l, x.Values)
			case *ast.RangeStmt:
				mark([]ast.Expr{x.Key, x.Value}, []ast.Expr{x.X})
			}
			return true
		})
	}
}

func typeTainted(t types.Type) bool {
	for i := 0; i < 3 && t != nil; i++ {
		switch u := t.(type) {
		case *types.Pointer:
			t = u.Elem()
			continue
		case *types.Slice:
			t = u.Elem()
			continue
		case *types.Named:
			o := u.Obj()
			if o.Pkg() != nil {
				name := strings.TrimPrefix(o.Pkg().Path(), mod) + "." + o.Name()
				return taintT[name]
			}
		}
		return false
	}
	return false
}

func exprTainted(e ast.Expr, info *types.Info, set map[types.Object]bool) bool {
	hit := false
	ast.Inspect(e, func(n ast.Node) bool {
		if hit {
			return false
		}
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.Ident:
			if taintN[x.Name] {
				hit = true
			}
			if o := info.Uses[x]; o != nil {
				if _, ok := o.(*types.Var); ok && (typeTainted(o.Type()) || set[o]) {
					hit = true
				}
			}
		case *ast.SelectorExpr:
			if taintN[x.Sel.Name] {
				hit = true
			}
			if tv, ok := info.Types[x]; ok && typeTainted(tv.Type) {
				hit = true
			}
		}
		return !hit
	})
	return hit
}

func callee(c *ast.CallExpr, info *types.Info) (*types.Func, ast.Expr) {
	switch f := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		o, _ := info.Uses[f].(*types.Func)
		return o, nil
	case *ast.SelectorExpr:
		o, _ := info.Uses[f.Sel].(*types.Func)
		if sel, ok := info.Selections[f]; ok && sel.Kind() == types.MethodVal {
			return o, f.X
		}
		return o, nil
	case *ast.IndexExpr: // generic instantiation
		if id, ok := f.X.(*ast.Ident); ok {
			o, _ := info.Uses[id].(*types.Func)
			return o, nil
		}
	}
	return nil, nil
}

func walk(f *fn, depth int, set map[types.Object]bool) {
	if f.decl.Body == nil || depth > maxDepth {
		return
	}
	propagate(f.decl.Body, f.info, set)
	ast.Inspect(f.decl.Body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		o, recv := callee(c, f.info)
		if o == nil {
			return true
		}
		o = o.Origin()
		if o.Pkg() == nil || !strings.HasPrefix(o.Pkg().Path(), mod) || isFloor(o.Pkg().Path()) {
			return true
		}
		name := o.FullName()
		g := funcs[name]
		if g == nil {
			return true
		}
		if skipTrivial && g.decl.Body != nil && len(g.decl.Body.List) <= 1 && !callsModule(g) {
			return true // an accessor or a constructor of a value: reading data, not a step
		}
		if blocks != nil && !executed(c.Pos()) {
			return true
		}
		tainted := recv != nil && exprTainted(recv, f.info, set)
		var argT []bool
		for _, a := range c.Args {
			t := exprTainted(a, f.info, set)
			argT = append(argT, t)
			tainted = tainted || t
		}
		if !tainted {
			return true
		}
		nodes = append(nodes, node{depth, g.file, strings.ReplaceAll(name, mod, "")})
		if !expanded[name] {
			expanded[name] = true
			sub := map[types.Object]bool{}
			var params []*ast.Ident
			for _, fl := range g.decl.Type.Params.List {
				params = append(params, fl.Names...)
			}
			for i, id := range params {
				if i < len(argT) && argT[i] {
					if o := g.info.Defs[id]; o != nil {
						sub[o] = true
					}
				}
			}
			if g.decl.Recv != nil && recv != nil && exprTainted(recv, f.info, set) {
				for _, fl := range g.decl.Recv.List {
					for _, id := range fl.Names {
						if o := g.info.Defs[id]; o != nil {
							sub[o] = true
						}
					}
				}
			}
			walk(g, depth+1, sub)
		}
		return true
	})
}

type block struct {
	sl, sc, el, ec, count int
}

var blocks map[string][]block

var skipTrivial bool

func loadProfile(name string) {
	blocks = map[string][]block{}
	data, err := os.ReadFile(name)
	if err != nil {
		panic(err)
	}
	for _, line := range strings.Split(string(data), "\n")[1:] {
		if line == "" {
			continue
		}
		var file string
		var b block
		var n int
		i := strings.LastIndex(line, ":")
		file = strings.TrimPrefix(line[:i], mod)
		fmt.Sscanf(line[i+1:], "%d.%d,%d.%d %d %d", &b.sl, &b.sc, &b.el, &b.ec, &n, &b.count)
		blocks[file] = append(blocks[file], b)
	}
}

func executed(p token.Pos) bool {
	pos := fset.Position(p)
	rel, _ := filepath.Rel(root, pos.Filename)
	best := -1
	size := 1 << 62
	bs := blocks[rel]
	for i, b := range bs {
		after := pos.Line > b.sl || pos.Line == b.sl && pos.Column >= b.sc
		before := pos.Line < b.el || pos.Line == b.el && pos.Column <= b.ec
		if after && before {
			sz := (b.el-b.sl)*10000 + (b.ec - b.sc)
			if sz < size {
				best, size = i, sz
			}
		}
	}
	if best < 0 {
		return false
	}
	// several profiles merged may list a block twice: any count > 0 wins
	for _, b := range bs {
		if b.sl == bs[best].sl && b.sc == bs[best].sc && b.el == bs[best].el && b.ec == bs[best].ec && b.count > 0 {
			return true
		}
	}
	return false
}

// callsModule reports whether g's body calls a function of a module package above the floor.
func callsModule(g *fn) bool {
	hit := false
	ast.Inspect(g.decl.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if o, _ := callee(c, g.info); o != nil && o.Pkg() != nil && strings.HasPrefix(o.Pkg().Path(), mod) && !isFloor(o.Pkg().Path()) {
				hit = true
			}
		}
		return !hit
	})
	return hit
}

// node is one call the walk followed: its depth, the callee's file and its name.
type node struct {
	depth int
	file  string
	fn    string
}

var nodes []node

// phases in order; phaseOf anchors a call made by the root (or by gate.run/runOnce under it).
var phases = []string{"top", "lock", "snapshot", "evaluate", "ledger"}

var anchors = []struct{ suffix, phase string }{
	{"gate.lockTask", "lock"}, {"gate.Lock", "lock"},
	{"contract.Load", "snapshot"}, {"tiers.GatherLoaded", "snapshot"}, {"tiers.Gather", "snapshot"},
	{"gate.sameContract", "snapshot"}, {"Release", "snapshot"}, {"tiers.NextRunID", "snapshot"},
	{"gate.openLogDir", "evaluate"}, {"tiers.Evaluate", "evaluate"}, {"Refused", "evaluate"},
	{"tiers.Budget", "evaluate"},
	{"tiers.Apply", "ledger"},
}

func phaseOf(fn string) string {
	for _, a := range anchors {
		if strings.HasSuffix(fn, a.suffix) {
			return a.phase
		}
	}
	return ""
}

type frame struct {
	file, last, phase, fn string
}

type entry struct {
	depth            int
	file, fn, phase  string
	ret              bool
	intoEarlierPhase string
}

// analyze prints the figures: file entries, files, returns, returns into a file an earlier phase
// entered; per phase; and with verbose the walk itself.
func analyze(w io.Writer, nodes []node, verbose bool) {
	var stack []frame
	entered := map[string]string{} // file -> the phase that first entered it
	var seq []entry
	for _, n := range nodes {
		if len(stack) > n.depth {
			stack = stack[:n.depth]
		}
		ph := "top"
		if len(stack) > 0 {
			ph = stack[len(stack)-1].phase
		}
		if len(stack) > 0 && stack[len(stack)-1].phase == "top" {
			if a := phaseOf(n.fn); a != "" {
				ph = a
			}
		}
		isEntry := len(stack) == 0
		if len(stack) > 0 {
			c := &stack[len(stack)-1]
			isEntry = n.file != c.file && n.file != c.last
			if n.file != c.file {
				c.last = n.file
			}
		}
		if isEntry {
			onStack := slices.ContainsFunc(stack, func(f frame) bool { return f.file == n.file })
			e := entry{depth: n.depth, file: n.file, fn: n.fn, phase: ph}
			if first, ok := entered[n.file]; ok && !onStack {
				e.ret = true
				if first != "top" && slices.Index(phases, first) < slices.Index(phases, ph) {
					e.intoEarlierPhase = first
				}
			}
			if _, ok := entered[n.file]; !ok {
				entered[n.file] = ph
			}
			seq = append(seq, e)
		}
		stack = append(stack, frame{file: n.file, phase: ph, fn: n.fn})
	}
	files := map[string]bool{}
	rets, cross := 0, 0
	for _, e := range seq {
		files[e.file] = true
		if e.ret {
			rets++
		}
		if e.intoEarlierPhase != "" {
			cross++
		}
	}
	fmt.Fprintf(w, "%d file entries, %d files, %d returns to a file already left, %d of them into a file an earlier phase entered\n", len(seq), len(files), rets, cross)
	for _, p := range phases {
		pf := map[string]bool{}
		n, r := 0, 0
		for _, e := range seq {
			if e.phase == p {
				n++
				pf[e.file] = true
				if e.ret {
					r++
				}
			}
		}
		fmt.Fprintf(w, "  %-8s %3d entries, %2d files, %2d returns\n", p+":", n, len(pf), r)
	}
	if !verbose {
		return
	}
	for _, e := range seq {
		tag := ""
		if e.ret {
			tag = " RETURN"
		}
		if e.intoEarlierPhase != "" {
			tag += " (to a file of " + e.intoEarlierPhase + ")"
		}
		fmt.Fprintf(w, "%s%s %s [%s]%s\n", strings.Repeat("  ", e.depth), e.file, e.fn, e.phase, tag)
	}
}
