package gate

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/shellcmd"
)

// maxShellDepth bounds how deep sh -c and eval strings are read inside each other.
const maxShellDepth = 8

// guardedSub is a geas command that writes under an agent's name, and the flags that name it.
type guardedSub struct {
	words []string // the command's words after geas: evidence add, task budget grant
	what  string   // what it writes, for the reason
	// names are the flags whose value must be the caller (--agent, --by); fileName the flag
	// whose value names the evidence file (--name).
	names    []string
	fileName string
}

// guardedSubs are the geas commands that write under an agent's name (SPEC §9). geas event log
// and geas task transition name an agent too, but what they write decides nothing.
var guardedSubs = []guardedSub{
	{words: []string{"evidence", "add"}, what: "evidence", names: []string{"agent"}, fileName: "name"},
	{words: []string{"task", "approve"}, what: "an approval", names: []string{"by"}},
	{words: []string{"task", "revalidate"}, what: "a re-pin of the base and an approval", names: []string{"by"}},
	{words: []string{"task", "budget", "grant"}, what: "a budget grant", names: []string{"by"}},
	{words: []string{"task", "history", "reset"}, what: "a history reset", names: []string{"by"}},
}

// valueFlags are geas flags that take a value and name no agent: a computed value of one of them
// (--task "$T") cannot change who a command writes as.
var valueFlags = []string{"task", "mission", "id", "file", "data", "reason", "retries", "format", "role", "base", "timeout",
	"commit", "branch", "status", "section", "to", "profile", "risk", "from", "dir", "C", "output", "o", "type"}

// guardedWords are what a command line the guard cannot read with certainty must not mention:
// the geas commands that write under a name, their name flags, and the agent names.
func (k *identityCheck) mentions(s string) bool {
	s = foldName(s)
	for _, w := range []string{"geas", "evidence", "approve", "revalidate", "grant", "reset", "--agent", "--by"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return slices.ContainsFunc(evidence.GeasAgentTypes, func(t string) bool { return strings.Contains(s, t) })
}

// shell checks a command line (a Bash tool's command, or one an MCP tool runs).
func (k *identityCheck) shell(line string, depth int) string {
	if depth > maxShellDepth {
		if k.mentions(line) {
			return k.deny("the command nests sh -c or eval deeper than %d levels, which the guard does not read, and it mentions geas, evidence or an agent", maxShellDepth)
		}
		return ""
	}
	l := shellcmd.Parse(line)
	if len(l.Problems) > 0 && k.mentions(line) {
		return k.deny("the command cannot be read with certainty (%s) and it mentions geas, evidence or an agent", strings.Join(l.Problems, "; "))
	}
	for _, c := range l.Commands {
		if why := k.command(c, depth); why != "" {
			return why
		}
	}
	return ""
}

// wrappers are programs that run the command that follows their options.
var wrappers = []string{"env", "command", "exec", "nohup", "time", "timeout", "nice", "ionice", "sudo", "doas", "setsid",
	"stdbuf", "chronic", "builtin", "unbuffer", "caffeinate", "flock", "chrt", "taskset", "strace", "ltrace", "script"}

// argAppenders run a command with arguments they read elsewhere (standard input, file names),
// which may add flags the command line does not show.
var argAppenders = []string{"xargs", "parallel", "find", "watch", "fd", "rush"}

// shells are programs that run a command-line string given with -c.
var shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "busybox", "fish", "su"}

// readOnly are programs that do not write the files their arguments name (they write through
// redirections, which are checked apart). geas writes only through its own commands, checked
// above.
var readOnly = []string{"cat", "less", "more", "head", "tail", "grep", "egrep", "fgrep", "rg", "ag", "jq", "ls", "wc", "diff",
	"cmp", "stat", "file", "sha256sum", "sha1sum", "md5sum", "b2sum", "cksum", "test", "[", "[[", "echo", "printf", "realpath",
	"readlink", "basename", "dirname", "du", "tree", "od", "xxd", "hexdump", "strings", "uniq", "cut", "column", "nl", "bat",
	"geas", "geas-plugin", "true", "false", "cd", "pushd", "for", "select", "case", "in", "esac", "function"}

// progName is a program word's name as compared: its base name, letter case folded, without
// ".exe".
func progName(w shellcmd.Word) string {
	return strings.TrimSuffix(strings.ToLower(path.Base(filepath.ToSlash(w.Text))), ".exe")
}

// command checks one simple command.
func (k *identityCheck) command(c shellcmd.Command, depth int) string {
	for _, r := range c.Redirects {
		if !r.Writes() {
			continue
		}
		if why := k.shellWrite(r.Target, "redirects output to"); why != "" {
			return why
		}
	}
	args := c.Args()
	if len(args) == 0 {
		return ""
	}
	// The program, past the wrappers that run it (env X=1 timeout 5 nice -n 3 geas ...).
	start := 0
	for start < len(args) && args[start].Literal && slices.Contains(wrappers, progName(args[start])) {
		start++
		for start < len(args) && (strings.HasPrefix(args[start].Text, "-") || shellcmd.IsAssignment(args[start]) || isDuration(args[start].Text)) {
			start++
		}
	}
	if start >= len(args) {
		return ""
	}
	prog := args[start]
	name := progName(prog)

	switch {
	case !prog.Literal:
	case name == "cd" || name == "pushd":
		k.cd(args[start+1:])
	case name == "eval":
		var b strings.Builder
		literal := true
		for _, w := range args[start+1:] {
			literal = literal && w.Literal
			b.WriteString(w.Text + " ")
		}
		if !literal {
			if k.mentions(b.String()) {
				return k.deny("eval runs a computed command (%s), which the guard cannot read, and it mentions geas, evidence or an agent", strings.TrimSpace(b.String()))
			}
		} else if why := k.shell(b.String(), depth+1); why != "" {
			return why
		}
	case slices.Contains(shells, name):
		for i := start + 1; i < len(args); i++ {
			a := args[i]
			if !a.Literal || !strings.HasPrefix(a.Text, "-") || strings.HasPrefix(a.Text, "--") {
				continue
			}
			if !strings.Contains(a.Text, "c") || i+1 >= len(args) {
				continue
			}
			script := args[i+1]
			if !script.Literal {
				if k.mentions(script.Raw) {
					return k.deny("%s -c runs a computed command (%s), which the guard cannot read, and it mentions geas, evidence or an agent", name, script.Raw)
				}
				break
			}
			if why := k.shell(script.Text, depth+1); why != "" {
				return why
			}
			break
		}
	}

	why, checked := k.geasCommand(args, start)
	if why != "" {
		return why
	}
	// Every literal word, the program's included: a wrapper may run a string as a command line
	// (script -qc '...', flock lock -c '...', ssh host '...').
	for _, w := range args {
		if !w.Literal {
			continue
		}
		if why := k.embedded(w.Text); why != "" {
			return why
		}
	}
	// A here-string is the program's input, which a shell runs (bash <<< '...').
	for _, r := range c.Redirects {
		if r.Op != "<<<" {
			continue
		}
		switch {
		case !r.Target.Literal && prog.Literal && slices.Contains(shells, name) && k.mentions(r.Target.Raw):
			return k.deny("%s runs a computed here-string (%s), which the guard cannot read, and it mentions geas, evidence or an agent", name, r.Target.Raw)
		case r.Target.Literal && prog.Literal && slices.Contains(shells, name):
			if why := k.shell(r.Target.Text, depth+1); why != "" {
				return why
			}
		case r.Target.Literal:
			if why := k.embedded(r.Target.Text); why != "" {
				return why
			}
		}
	}
	// A computed program is refused when the line mentions what the guard protects, unless it
	// runs a guarded geas command whose names were all read as the caller's and the program is
	// one double-quoted word ("$CLAUDE_PLUGIN_ROOT/bin/geas-plugin"), which word splitting
	// cannot turn into more arguments.
	if !prog.Literal && !(checked && quotedWhole(prog.Raw)) && k.mentions(strings.Join(rawWords(args), " ")) {
		return k.deny("the command's program is computed (%s), so the guard cannot tell what it runs, and it mentions geas, evidence or an agent", prog.Raw)
	}
	if !prog.Literal || !readsOnly(name, args[start+1:]) {
		for _, w := range args[start+1:] {
			if why := k.shellWrite(w, "("+name+") writes or moves"); why != "" {
				return why
			}
		}
	}
	return ""
}

// rawWords are the words as written.
func rawWords(ws []shellcmd.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Raw
	}
	return out
}

// readsOnly reports a program, given its arguments, that writes none of the files they name: one
// of readOnly, find without actions that delete, run or print to a file, sed without -i, and git
// commands that change no file of the working tree (status, diff, log, show, add, commit, ...).
func readsOnly(name string, args []shellcmd.Word) bool {
	switch name {
	case "find":
		return !slices.ContainsFunc(args, func(w shellcmd.Word) bool {
			return slices.Contains([]string{"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}, w.Text)
		})
	case "sed":
		return !slices.ContainsFunc(args, func(w shellcmd.Word) bool {
			return !w.Literal || strings.HasPrefix(w.Text, "--in-place") || strings.HasPrefix(w.Text, "-") && !strings.HasPrefix(w.Text, "--") && strings.Contains(w.Text, "i")
		})
	case "git":
		for i := 0; i < len(args); i++ {
			a := args[i]
			if !a.Literal {
				return false
			}
			if a.Text == "-C" || a.Text == "-c" {
				i++
				continue
			}
			if strings.HasPrefix(a.Text, "-") {
				continue
			}
			return slices.Contains(gitReadOnly, a.Text)
		}
		return true
	}
	return slices.Contains(readOnly, name)
}

// gitReadOnly are git commands that write no file of the working tree they are given.
var gitReadOnly = []string{"status", "diff", "log", "show", "add", "commit", "blame", "ls-files", "grep", "rev-parse", "cat-file", "shortlog", "whatchanged", "annotate", "check-ignore"}

// cd follows a cd or pushd of the line: relative paths after it may be relative to where it went.
func (k *identityCheck) cd(args []shellcmd.Word) {
	var dir *shellcmd.Word
	for i := range args {
		if !strings.HasPrefix(args[i].Text, "-") || args[i].Text == "-" {
			dir = &args[i]
			break
		}
	}
	if dir == nil || !dir.Literal || dir.Text == "-" {
		k.unknownCwd = true
		return
	}
	for _, c := range slices.Clone(k.cwds) {
		k.cwds = append(k.cwds, absPath(dir.Text, c))
	}
}

// shellWrite refuses a shell write (a redirection's target, a writing program's argument) into
// an evidence directory, whose content the guard cannot read: evidence is written with geas
// evidence add. A computed target is refused when it mentions evidence or .geas, and a relative
// one after a cd to a computed place when it mentions evidence.
func (k *identityCheck) shellWrite(w shellcmd.Word, how string) string {
	if !w.Literal {
		if s := strings.ToLower(w.Raw); strings.Contains(s, "evidence") || strings.Contains(s, ".geas") {
			return k.deny("the command %s %s, a path the guard cannot compute, into what may be an evidence directory", how, w.Raw)
		}
		return ""
	}
	candidates := []string{w.Text}
	if _, v, ok := strings.Cut(w.Text, "="); ok {
		candidates = append(candidates, v) // dd of=PATH, --target-directory=PATH
	}
	for _, p := range candidates {
		for _, dir := range k.cwds {
			if task, _, ok := k.evidencePath(p, dir); ok {
				return k.deny("the command %s %s, in task %s's evidence directory, whose content the guard cannot read", how, p, task)
			}
		}
		if k.unknownCwd && !filepath.IsAbs(p) && strings.Contains(strings.ToLower(p), "evidence") {
			return k.deny("the command %s %s after a cd to a place the guard cannot compute, and the path mentions evidence", how, p)
		}
	}
	return ""
}

// geasCommand checks a command whose words hold one of guardedSubs: every flag naming an agent
// must name the caller, literally. args[start] is the program. checked: the words held a guarded
// command and every name in it is the caller's.
func (k *identityCheck) geasCommand(args []shellcmd.Word, start int) (why string, checked bool) {
	var words []string
	for _, w := range args[start:] {
		if w.Literal {
			words = append(words, foldName(w.Text))
		}
	}
	geasLike := args[start].Literal && (strings.HasPrefix(progName(args[start]), "geas") || progName(args[start]) == "go")
	var sub *guardedSub
	for i := range guardedSubs {
		if subsequence(words, guardedSubs[i].words) {
			sub = &guardedSubs[i]
			break
		}
	}
	if sub == nil {
		if geasLike {
			// geas $SUB ...: a computed word where a command name may stand.
			for i, w := range args[start+1:] {
				if !w.Literal && !k.valueOfFlag(args[start+1:], i) && k.mentions(strings.Join(rawWords(args), " ")) {
					return k.denied("the command runs %s with a computed word (%s) where a command or flag may stand, and it mentions geas, evidence or an agent", args[start].Text, w.Raw)
				}
			}
		}
		return "", false
	}
	cmdline := strings.Join(rawWords(args[start:]), " ")
	// An argument appender anywhere among the words: a wrapper before the program (xargs geas ...)
	// or a word after it.
	for _, w := range args {
		if w.Literal && slices.Contains(argAppenders, progName(w)) {
			return k.denied("the command runs geas %s through %s, which adds arguments the guard cannot read: %s", strings.Join(sub.words, " "), progName(w), cmdline)
		}
	}
	rest := args[start+1:]
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if !w.Literal {
			if k.valueOfFlag(rest, i) {
				continue
			}
			return k.denied("the command writes %s (geas %s) with a computed word (%s) the guard cannot read, which may name an agent: %s",
				sub.what, strings.Join(sub.words, " "), w.Raw, cmdline)
		}
		flag, value, inline := strings.Cut(w.Text, "=")
		if !strings.HasPrefix(flag, "--") {
			continue
		}
		flag = strings.TrimPrefix(flag, "--")
		isName := slices.Contains(sub.names, flag)
		isFile := flag == sub.fileName && sub.fileName != ""
		if !isName && !isFile {
			continue
		}
		if !inline {
			if i+1 >= len(rest) {
				continue
			}
			i++
			if !rest[i].Literal {
				return k.denied("the command writes %s (geas %s) with --%s %s, a value the guard cannot compute: %s", sub.what, strings.Join(sub.words, " "), flag, rest[i].Raw, cmdline)
			}
			value = rest[i].Text
		}
		switch {
		case isName && !k.sameAgent(value):
			return k.denied("the command writes %s (geas %s) with --%s %s, under another agent's name: %s", sub.what, strings.Join(sub.words, " "), flag, value, cmdline)
		case isFile && !k.ownName(value):
			return k.denied("the command writes %s (geas %s) with --%s %s, another agent's evidence file by its name: %s", sub.what, strings.Join(sub.words, " "), flag, value, cmdline)
		}
	}
	return "", true
}

// valueOfFlag reports whether ws[i] is the value of a geas flag that names no agent: the word
// after --task, or --task=$T itself.
func (k *identityCheck) valueOfFlag(ws []shellcmd.Word, i int) bool {
	if f, _, ok := strings.Cut(ws[i].Prefix, "="); ok && strings.HasPrefix(f, "-") {
		return slices.Contains(valueFlags, strings.TrimLeft(f, "-"))
	}
	if i == 0 || !ws[i-1].Literal || strings.Contains(ws[i-1].Text, "=") {
		return false
	}
	f := ws[i-1].Text
	return strings.HasPrefix(f, "-") && slices.Contains(valueFlags, strings.TrimLeft(f, "-"))
}

// subsequence reports whether want appears in words in order, other words between allowed (a
// flag before a subcommand: geas -C dir evidence --task t add).
func subsequence(words, want []string) bool {
	j := 0
	for _, w := range words {
		if j < len(want) && w == want[j] {
			j++
		}
	}
	return j == len(want)
}

// denied is deny for a function that also says whether it checked.
func (k *identityCheck) denied(format string, args ...any) (string, bool) {
	return k.deny(format, args...), false
}

// quotedWhole reports a word that is one double-quoted string ("$X/bin/geas").
func quotedWhole(raw string) bool {
	return len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && strings.Count(raw, `"`)-strings.Count(raw, `\"`) == 2
}

// isDuration reports a number or a duration (timeout 5, timeout 1.5m, nice -n 3's 3), which a
// wrapper takes before the program it runs.
func isDuration(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("0123456789.smhd", r) }) < 0
}

// embedded checks text that may be run later or elsewhere (a literal word of a command: printf
// 'geas evidence add --agent X' > s.sh, python3 -c '...'; a script a file tool writes): a geas
// command in it that writes under a name, read as tokens between quotes, brackets, commas and
// space (so a Python or JSON list of arguments reads too), is refused when it names another agent
// than the caller. What it cannot read is not refused: the text is not a command the shell runs.
func (k *identityCheck) embedded(text string) string {
	if !k.mentions(text) {
		return ""
	}
	tokens := strings.FieldsFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune("\"'`,[](){};|&<>\\", r)
	})
	for i, tok := range tokens {
		if !strings.HasPrefix(progName(shellcmd.Word{Text: tok}), "geas") {
			continue
		}
		var words []shellcmd.Word
		for _, t := range tokens[i:min(i+maxEmbeddedTokens, len(tokens))] {
			if len(words) > 0 && strings.HasPrefix(progName(shellcmd.Word{Text: t}), "geas") {
				break // the next geas command
			}
			words = append(words, shellcmd.LiteralWord(t))
		}
		if why := k.literalNames(words); why != "" {
			return why
		}
	}
	return ""
}

// maxEmbeddedTokens bounds the tokens after "geas" that embedded reads as its arguments.
const maxEmbeddedTokens = 64

// literalNames refuses a guarded geas command (args[0] is the program) whose literal name flags
// name a geas agent type other than the caller.
func (k *identityCheck) literalNames(args []shellcmd.Word) string {
	var words []string
	for _, w := range args {
		if w.Literal {
			words = append(words, foldName(w.Text))
		}
	}
	for _, sub := range guardedSubs {
		if !subsequence(words, sub.words) {
			continue
		}
		for i := 1; i < len(args); i++ {
			flag, value, inline := strings.Cut(args[i].Text, "=")
			if !args[i].Literal || !slices.Contains(sub.names, strings.TrimPrefix(flag, "--")) || !strings.HasPrefix(flag, "--") {
				continue
			}
			if !inline {
				if i+1 >= len(args) || !args[i+1].Literal {
					continue
				}
				i++
				value = args[i].Text
			}
			// Text is not a command line: only a value that names a geas agent type is taken as
			// a name ("--agent, as in the README" is prose).
			if !k.sameAgent(value) && evidence.AgentType(foldName(value), evidence.GeasAgentTypes) != "" {
				return k.deny("the command holds, as text it writes or passes on, geas %s %s %s: %s under another agent's name, which a script run later would write",
					strings.Join(sub.words, " "), flag, value, sub.what)
			}
		}
	}
	return ""
}
