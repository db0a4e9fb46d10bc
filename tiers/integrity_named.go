package tiers

import (
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// What the eval commands name (SPEC §5.2a.1 b): the files they run and the configuration entries
// their runners read. A command is split into simple commands at the shell's operators, and each
// into words with quotes removed; `cd DIR` moves the directory of the simple commands after it
// and `sh -c 'TEXT'` is read as the commands in TEXT. The split is the shell's in the common
// cases, not a shell: a command that hides a path in a variable names nothing, and its file is
// protected only when the table covers it.

// maxNamedWords bounds the words read from one command (and its nested sh -c texts).
const maxNamedWords = 512

// protectedKey is a configuration entry that a command's runner reads: protected alone, not the
// whole file that holds it.
type protectedKey struct {
	File string // relative to the project root
	Key  string // scripts.NAME, tool.pytest.ini_options, tool:pytest
	Why  string
	// AsPath: adding the key where the base has none is a change too (a runner configuration).
	AsPath bool
}

// commandNames is what the eval commands name.
type commandNames struct {
	// Words are candidate paths (relative to the project root, cleaned) with the command that
	// names them; the caller keeps those that are files in the base tree.
	Words map[string]string
	// Makefiles are the Makefile paths a make command reads (the first the base has counts).
	Makefiles map[string]string
	Keys      []protectedKey
	// Makes are the make runs of the commands: what the gate reads at the base to follow the
	// recipes of the targets they run (followMake).
	Makes []makeRun
	// IncludeGlobs are the makefile patterns a Makefile includes (followMake fills them in).
	IncludeGlobs map[string]string
	// Shadows are paths that would take the place of a module a command runs (python -m MOD finds
	// MOD.py or MOD/ in its directory before the standard library's): protected as paths, so that
	// adding one is a change, as for a test-runner configuration.
	Shadows map[string]string
}

// makeRun is one make command: its directory, its -f files ("" for the default Makefile) and the
// targets it names (none: the default target).
type makeRun struct {
	Dir     string
	Files   []string
	Targets []string
	Why     string
}

var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// namesOf reads the eval commands (run, workdir) for what they name.
func namesOf(cmds [][2]string) *commandNames {
	n := &commandNames{Words: map[string]string{}, Makefiles: map[string]string{}, Shadows: map[string]string{}, IncludeGlobs: map[string]string{}}
	for i, c := range cmds {
		why := "named by eval command " + strconv.Itoa(i+1)
		budget := maxNamedWords
		n.read(c[0], cleanRel(c[1]), why, &budget, 0)
	}
	return n
}

// cleanRel cleans a slash path relative to the project root; "" when it leaves the root or is
// absolute (such a path is nothing of the project's).
func cleanRel(p string) string {
	if p == "" {
		return "."
	}
	if strings.HasPrefix(p, "/") {
		return ""
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return ""
	}
	return c
}

func (n *commandNames) read(text, dir, why string, budget *int, depth int) {
	if depth > 4 || dir == "" {
		return
	}
	for _, words := range splitCommands(text) {
		if *budget <= 0 {
			return
		}
		*budget -= len(words)
		for len(words) > 0 && envAssign.MatchString(words[0]) {
			words = words[1:]
		}
		for len(words) > 0 && isPrefixCommand(path.Base(words[0])) {
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		cmd := path.Base(words[0])
		if cmd == "cd" {
			if len(words) > 1 {
				dir = cleanRel(path.Join(dir, words[1]))
				if strings.HasPrefix(words[1], "/") {
					dir = ""
				}
			}
			if dir == "" {
				return
			}
			continue
		}
		if isShell(cmd) {
			for i := 1; i+1 < len(words); i++ {
				if words[i] == "-c" {
					n.read(words[i+1], dir, why, budget, depth+1)
				}
			}
		}
		for _, w := range executed(cmd, words) {
			n.word(w, dir, why)
		}
		n.runner(cmd, words[1:], dir, why)
	}
}

// executed are the words of a simple command that name what it executes: the command itself when
// it is a path (./run_tests.sh), the script an interpreter runs (sh test/x.sh, python3 t.py, node
// test/a.js), every file bats runs, the modules and files python -m unittest or pytest runs, and
// the Makefile of make -f. The other words are the command's data (grep -q x README.md, a
// redirection's target): the work itself may change them, and the command, which is pinned,
// is the check.
func executed(cmd string, words []string) []string {
	var out []string
	if strings.Contains(words[0], "/") {
		out = append(out, words[0])
	}
	args := words[1:]
	first := func(skipWithValue ...string) string {
		for i := 0; i < len(args); i++ {
			a := args[i]
			if strings.HasPrefix(a, "-") {
				if slices.Contains(skipWithValue, a) {
					i++
				}
				continue
			}
			return a
		}
		return ""
	}
	switch {
	case isShell(cmd):
		if !slices.Contains(args, "-c") {
			out = append(out, first("-o", "+o", "-O", "+O"))
		}
	case isPython(cmd):
		for i, a := range args {
			if a == "-m" && i+1 < len(args) {
				if m := args[i+1]; m == "unittest" || m == "pytest" {
					for _, x := range args[i+2:] {
						if !strings.HasPrefix(x, "-") {
							out = append(out, x)
						}
					}
				}
				return out
			}
			if a == "-c" {
				return out
			}
		}
		out = append(out, first("-W", "-X", "-Q"))
	case cmd == "node" || cmd == "bun" || cmd == "ruby" || cmd == "perl" || cmd == "php" || cmd == "tsx" || cmd == "ts-node":
		if slices.Contains(args, "-e") || slices.Contains(args, "--eval") {
			return out
		}
		if cmd == "node" && slices.Contains(args, "--test") {
			for _, x := range args {
				if !strings.HasPrefix(x, "-") {
					out = append(out, x)
				}
			}
			return out
		}
		out = append(out, first("-r", "--require", "--import", "--loader", "-I"))
	case cmd == "deno" && len(args) > 1 && (args[0] == "run" || args[0] == "test"):
		for _, x := range args[1:] {
			if !strings.HasPrefix(x, "-") {
				out = append(out, x)
			}
		}
	case cmd == "bats" || cmd == "pytest" || cmd == "py.test":
		for _, x := range args {
			if !strings.HasPrefix(x, "-") {
				out = append(out, x)
			}
		}
	case cmd == "make" || cmd == "gmake":
		for i := 0; i+1 < len(args); i++ {
			if args[i] == "-f" {
				out = append(out, args[i+1])
			}
		}
	}
	return out
}

// word records a word as a candidate path, and a dotted Python module name (test.test_greet) as
// the file it names.
func (n *commandNames) word(w, dir, why string) {
	if w == "" || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "-") {
		return
	}
	if p := cleanRel(path.Join(dir, w)); p != "" && p != "." {
		n.Words[p] = why
	}
	if pythonModule.MatchString(w) && strings.Contains(w, ".") && !strings.HasSuffix(w, ".py") {
		if p := cleanRel(path.Join(dir, strings.ReplaceAll(w, ".", "/")+".py")); p != "" {
			n.Words[p] = why
		}
	}
}

var pythonModule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$`)

func isPrefixCommand(c string) bool {
	switch c {
	case "env", "exec", "command", "time", "nohup", "nice", "builtin":
		return true
	}
	return false
}

func isShell(c string) bool {
	switch c {
	case "sh", "bash", "dash", "zsh", "ksh":
		return true
	}
	return false
}

// runner records what a runner reads besides the words: make's Makefile, npm's script, pytest's
// configuration tables.
func (n *commandNames) runner(cmd string, args []string, dir, why string) {
	join := func(f string) string { return cleanRel(path.Join(dir, f)) }
	switch {
	case cmd == "make" || cmd == "gmake":
		mdir := dir
		var files, targets []string
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case (a == "-C" || a == "-f" || a == "--file" || a == "--makefile" || a == "-I" || a == "-o" || a == "-W") && i+1 < len(args):
				i++
				if a == "-C" {
					mdir = cleanRel(path.Join(mdir, args[i]))
				} else if a != "-I" && a != "-o" && a != "-W" {
					files = append(files, args[i])
				}
			case strings.HasPrefix(a, "-") || strings.Contains(a, "="):
			default:
				targets = append(targets, a)
			}
		}
		if mdir != "" {
			for _, f := range []string{"GNUmakefile", "makefile", "Makefile"} {
				n.Makefiles[cleanRel(path.Join(mdir, f))] = why
			}
			n.Makes = append(n.Makes, makeRun{Dir: mdir, Files: files, Targets: targets, Why: why})
		}
	case cmd == "npm" || cmd == "pnpm" || cmd == "yarn":
		if name := scriptName(cmd, args); name != "" {
			for _, k := range []string{"pre" + name, name, "post" + name} {
				n.Keys = append(n.Keys, protectedKey{File: join("package.json"), Key: "scripts." + k, Why: why})
			}
		}
	case isPython(cmd) && pythonModuleRun(args) != "":
		// The command's directory comes first on sys.path: a MOD.py or MOD/ there is what runs.
		mod := strings.ReplaceAll(pythonModuleRun(args), ".", "/")
		for _, f := range []string{mod + ".py", mod + "/__init__.py", mod + "/__main__.py"} {
			if p := join(f); p != "" {
				n.Shadows[p] = why + " (python -m " + pythonModuleRun(args) + ")"
			}
		}
		if top, _, _ := strings.Cut(mod, "/"); top != mod {
			if p := join(top + "/__init__.py"); p != "" {
				n.Shadows[p] = why + " (python -m " + pythonModuleRun(args) + ")"
			}
		}
		if pythonModuleRun(args) == "pytest" {
			n.pytestKeys(dir, join, why)
		}
	case cmd == "pytest" || cmd == "py.test":
		n.pytestKeys(dir, join, why)
	}
}

// pythonModuleRun is the module of python [OPTIONS] -m MOD ("" for none).
func pythonModuleRun(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-m" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "-m") && !strings.HasPrefix(a, "--"):
			return a[2:] // python -munittest
		case a == "-X" || a == "-W":
			i++
		case a == "-c" || !strings.HasPrefix(a, "-"):
			return ""
		}
	}
	return ""
}

// pytestKeys are pytest's configuration tables, in the command's directory and at the root.
func (n *commandNames) pytestKeys(dir string, join func(string) string, why string) {
	n.Keys = append(n.Keys,
		protectedKey{File: join("pyproject.toml"), Key: "tool.pytest.ini_options", Why: why, AsPath: true},
		protectedKey{File: join("setup.cfg"), Key: "tool:pytest", Why: why, AsPath: true})
	if dir != "." { // pytest looks for its configuration up to the root
		n.Keys = append(n.Keys,
			protectedKey{File: "pyproject.toml", Key: "tool.pytest.ini_options", Why: why, AsPath: true},
			protectedKey{File: "setup.cfg", Key: "tool:pytest", Why: why, AsPath: true})
	}
}

func isPython(c string) bool {
	return c == "python" || c == "python3" || strings.HasPrefix(c, "python3.")
}

// scriptName is the package.json script an npm, pnpm or yarn command runs ("" for none).
func scriptName(cmd string, args []string) string {
	var pos []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
		}
	}
	if len(pos) == 0 {
		return "" // bare yarn installs
	}
	switch pos[0] {
	case "test", "t", "tst":
		return "test"
	case "start", "stop", "restart":
		return pos[0]
	case "run", "run-script", "rum", "urn":
		if len(pos) > 1 {
			return pos[1]
		}
		return ""
	}
	if cmd == "npm" {
		return "" // npm runs scripts only through run (and test, start…)
	}
	switch pos[0] { // pnpm and yarn run NAME as a script unless it is a command of theirs
	case "install", "i", "add", "remove", "rm", "exec", "dlx", "dedupe", "update", "up", "why", "list", "ls", "info", "outdated", "audit", "link", "unlink", "pack", "publish", "init", "create", "config", "cache", "store", "import", "rebuild", "prune", "node", "bin", "workspace", "workspaces", "set", "plugin", "upgrade", "upgrade-interactive", "global", "licenses", "login", "logout", "owner", "tag", "team", "version", "versions", "help", "env", "patch", "patch-commit":
		return ""
	}
	return pos[0]
}

// splitCommands splits a command line into simple commands (at ; & | ( ) and newlines), each a
// list of words with quotes and backslashes removed as the shell does.
func splitCommands(s string) [][]string {
	var out [][]string
	var words []string
	var w strings.Builder
	inWord := false
	flushWord := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		if len(words) > 0 {
			out = append(out, words)
			words = nil
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				w.WriteString(s[i+1:])
				i = len(s)
				break
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			inWord = true
			i++
			if s[i] != '\n' {
				w.WriteByte(s[i])
			}
		case c == ' ' || c == '\t' || c == '<' || c == '>':
			flushWord()
		case c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '\n' || c == '`':
			flushCmd()
		case c == '#' && !inWord:
			for i < len(s) && s[i] != '\n' {
				i++
			}
			flushCmd()
		default:
			inWord = true
			w.WriteByte(c)
		}
	}
	flushCmd()
	return out
}

// maxMakeIncludes bounds how deep make's includes are followed.
const maxMakeIncludes = 4

// makeFollow is what a make run reads and runs, as the base has it: the included makefiles (a
// protected check like the Makefile that includes them) and the recipe lines of the targets the
// command runs, with their prerequisites, which the gate reads as commands of their own.
type makeFollow struct {
	Includes []string // relative to the project root
	// IncludeGlobs are the patterns make includes by (include *.mk, $(wildcard conf/*.mk)):
	// every file that matches is a makefile of the run, an added one too.
	IncludeGlobs []string
	Recipes      []string
}

// followMake reads a make run's makefiles through read (a path relative to the project root; ok
// false when the base has no such file). The first of GNUmakefile, makefile, Makefile that exists
// is the makefile unless -f names others. Recipes of pattern rules and words holding a variable are
// not followed: the reading is make's in the common cases, not make.
func followMake(m makeRun, read func(string) ([]byte, bool, error)) (makeFollow, error) {
	var out makeFollow
	rules := map[string][]string{} // target -> recipe lines
	deps := map[string][]string{}
	first := ""
	var parse func(file string, depth int) (bool, error)
	parse = func(file string, depth int) (bool, error) {
		data, ok, err := read(file)
		if err != nil || !ok {
			return ok, err
		}
		var current []string
		for _, line := range makeLines(string(data)) {
			if strings.HasPrefix(line, "\t") {
				for _, t := range current {
					rules[t] = append(rules[t], strings.TrimLeft(strings.TrimSpace(line), "@-+"))
				}
				continue
			}
			t := strings.TrimSpace(line)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if w := strings.Fields(t); w[0] == "include" || w[0] == "-include" || w[0] == "sinclude" {
				current = nil
				for _, inc := range includeWords(w[1:]) {
					if strings.ContainsAny(inc, "*?[") {
						if g := cleanRel(path.Join(m.Dir, inc)); g != "" {
							out.IncludeGlobs = append(out.IncludeGlobs, g)
						}
						continue
					}
					if strings.Contains(inc, "$") || depth >= maxMakeIncludes {
						continue
					}
					p := cleanRel(path.Join(m.Dir, inc))
					if p == "" {
						continue
					}
					found, err := parse(p, depth+1)
					if err != nil {
						return false, err
					}
					if found {
						out.Includes = append(out.Includes, p)
					}
				}
				continue
			}
			colon := strings.IndexByte(t, ':')
			eq := strings.IndexByte(t, '=')
			if colon < 0 || eq >= 0 && eq < colon || strings.HasPrefix(t[colon:], ":=") || strings.HasPrefix(t[colon:], "::=") {
				current = nil // an assignment or a directive
				continue
			}
			rest := strings.TrimLeft(t[colon+1:], ":")
			rest, inline, hasInline := strings.Cut(rest, ";")
			current = strings.Fields(t[:colon])
			for _, tg := range current {
				deps[tg] = append(deps[tg], strings.Fields(rest)...)
				if hasInline {
					rules[tg] = append(rules[tg], strings.TrimLeft(strings.TrimSpace(inline), "@-+"))
				}
				if first == "" && !strings.HasPrefix(tg, ".") && !strings.Contains(tg, "%") {
					first = tg
				}
			}
		}
		return true, nil
	}
	files := m.Files
	if len(files) == 0 {
		files = []string{"GNUmakefile", "makefile", "Makefile"}
	}
	for _, f := range files {
		p := cleanRel(path.Join(m.Dir, f))
		if p == "" {
			continue
		}
		found, err := parse(p, 0)
		if err != nil {
			return out, err
		}
		if found && len(m.Files) == 0 {
			break // make reads the first default makefile it finds
		}
	}
	todo := slices.Clone(m.Targets)
	if len(todo) == 0 && first != "" {
		todo = []string{first}
	}
	seen := map[string]bool{}
	for len(todo) > 0 {
		t := todo[0]
		todo = todo[1:]
		if seen[t] || len(seen) >= maxNamedWords {
			continue
		}
		seen[t] = true
		out.Recipes = append(out.Recipes, rules[t]...)
		todo = append(todo, deps[t]...)
	}
	return out, nil
}

// includeWords are the words of an include directive with $(wildcard …) opened into its patterns.
func includeWords(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "$(wildcard") || strings.HasPrefix(w, "${wildcard") {
			for ; i < len(words); i++ {
				p := strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(words[i], "$(wildcard"), "${wildcard"), " ")
				end := strings.ContainsAny(p, ")}")
				if p = strings.TrimRight(p, ")}"); p != "" {
					out = append(out, p)
				}
				if end {
					break
				}
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// makeLines splits a makefile into logical lines, a backslash-newline joining two.
func makeLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\\\n", " ")
	return strings.Split(s, "\n")
}
