// Package shellcmd reads a POSIX shell command line (what Claude Code's Bash tool runs) as far as
// it can be read with certainty, without running anything: the simple commands it holds, with
// their words as the program would receive them after quote removal, and which words the shell
// would still change (a parameter, a command substitution, a glob). It is the reader of the
// PreToolUse identity guard, which must see `geas evidence add --agent X` through quoting,
// operators, subshells and substitutions, and must know when it cannot.
//
// It is not a shell: it never expands anything. A word the shell would expand is kept as written
// and marked not Literal; what the reader cannot follow (an unterminated quote, nesting deeper
// than maxDepth) is named in Line.Problems. Commands nested in $(...), `...`, <(...), (...) and
// here-documents are read too and listed with the others, each in the order it ends (a
// substitution's commands before the command that holds them).
package shellcmd

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting of substitutions and subshells the reader follows; deeper nesting
// is a Problem, never a stack overflow.
const maxDepth = 32

// Word is one word of a simple command.
type Word struct {
	// Text is the word after quote removal; parts the shell would expand are kept as written
	// ("$X", "$(cmd)", "*").
	Text string
	// Raw is the word as written in the command line.
	Raw string
	// Literal: the shell passes Text to the program unchanged (no expansion, substitution, glob,
	// brace or tilde expansion).
	Literal bool
	// Prefix is the literal start of Text, up to the first part the shell would expand (all of
	// Text when Literal): "--task=" of --task=$T.
	Prefix string
}

// LiteralWord is s as a word the shell passes unchanged (Literal, all of it its Prefix): an
// argument a caller has as a program would receive it, not as a command line.
func LiteralWord(s string) Word {
	return Word{Text: s, Raw: s, Literal: true, Prefix: s}
}

// Redirect is one redirection of a simple command.
type Redirect struct {
	// Op is the operator as written without its file descriptor: ">", ">>", ">|", "<", "<>",
	// "&>", "&>>", ">&", "<&", "<<", "<<-" or "<<<".
	Op string
	// Target is the word after the operator (a file, a descriptor, a here-document's delimiter).
	Target Word
}

// Writes reports whether the redirection may write the file its target names: an output
// redirection that is not a duplication of a descriptor (2>&1, >&-).
func (r Redirect) Writes() bool {
	switch r.Op {
	case ">", ">>", ">|", "<>", "&>", "&>>":
		return true
	case ">&":
		t := r.Target.Text
		if r.Target.Literal && (t == "-" || isDigits(t)) {
			return false
		}
		return true // >&file writes file (bash)
	}
	return false
}

// Command is one simple command: its words (leading NAME=value assignments included, reserved
// words such as "if" or "!" dropped) and its redirections.
type Command struct {
	Words     []Word
	Redirects []Redirect
	// Depth is how deep the command is nested in substitutions and subshells (0: top level).
	Depth int
}

// Args is the command's words after its leading variable assignments: the program and its
// arguments.
func (c Command) Args() []Word {
	for i, w := range c.Words {
		if !IsAssignment(w) {
			return c.Words[i:]
		}
	}
	return nil
}

// IsAssignment reports whether w is a NAME=value assignment.
func IsAssignment(w Word) bool {
	name, _, ok := strings.Cut(w.Raw, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Line is a whole command line as read.
type Line struct {
	Commands []Command
	// Problems say what could not be read with certainty; empty when the line was read whole.
	Problems []string
}

// Parse reads a command line.
func Parse(s string) Line {
	var l Line
	p := &parser{s: s, line: &l}
	p.list(0, 0)
	return l
}

type parser struct {
	s    string
	i    int
	line *Line
	// heredocs are the here-documents whose bodies start after the next newline.
	heredocs []heredoc
}

type heredoc struct {
	delim  string
	quoted bool // the delimiter was quoted: the body is not expanded
	strip  bool // <<-: leading tabs are stripped
	depth  int
}

func (p *parser) problem(msg string) {
	if len(p.line.Problems) < 20 {
		p.line.Problems = append(p.line.Problems, msg)
	}
}

// list reads commands until the end of the input or, when stop is ')', an unquoted ')' at a
// command boundary, which it consumes.
func (p *parser) list(depth int, stop byte) {
	if depth > maxDepth {
		p.problem("nested deeper than " + strconv.Itoa(maxDepth) + " levels")
		p.i = len(p.s)
		return
	}
	cmd := Command{Depth: depth}
	flush := func() {
		if len(cmd.Words) > 0 || len(cmd.Redirects) > 0 {
			p.line.Commands = append(p.line.Commands, cmd)
		}
		cmd = Command{Depth: depth}
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			p.i++
		case c == '\\' && p.i+1 < len(p.s) && p.s[p.i+1] == '\n':
			p.i += 2 // line continuation between words
		case c == '\n':
			p.i++
			flush()
			p.readHeredocs()
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case c == ';' || c == '&' || c == '|':
			if c == '&' && p.i+1 < len(p.s) && p.s[p.i+1] == '>' {
				p.redirect(&cmd, depth)
				continue
			}
			p.i++
			if p.i < len(p.s) && (p.s[p.i] == c || (c == '|' && p.s[p.i] == '&') || (c == ';' && p.s[p.i] == '&')) {
				p.i++
			}
			flush()
		case c == '(':
			p.i++
			flush()
			if p.i < len(p.s) && p.s[p.i] == '(' {
				// (( arithmetic )): no commands inside, but substitutions may be.
				p.i++
				p.skipArith(depth)
				continue
			}
			p.list(depth+1, ')')
		case c == ')':
			if stop == ')' {
				p.i++
				flush()
				return
			}
			// The shell refuses an unmatched ")"; read on.
			p.problem("unmatched ) at byte " + strconv.Itoa(p.i))
			p.i++
			flush()
		case c == '<' || c == '>':
			p.redirect(&cmd, depth)
		default:
			if isDigits(string(c)) {
				// A descriptor number directly before a redirection: 2>file.
				j := p.i
				for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
					j++
				}
				if j < len(p.s) && (p.s[j] == '<' || p.s[j] == '>') {
					p.i = j
					p.redirect(&cmd, depth)
					continue
				}
			}
			w := p.word(depth)
			if len(cmd.Words) == 0 && w.Literal && reserved[w.Text] {
				continue // if, then, !, {, ... introduce the command that follows
			}
			cmd.Words = append(cmd.Words, w)
		}
	}
	if stop == ')' {
		p.problem("unterminated ( or $(")
	}
	flush()
}

// reserved are the shell's reserved words that may precede a command.
var reserved = map[string]bool{
	"!": true, "{": true, "}": true, "if": true, "then": true, "else": true, "elif": true, "fi": true,
	"do": true, "done": true, "while": true, "until": true, "time": true, "coproc": true,
}

// redirect reads a redirection operator and its target word at p.i.
func (p *parser) redirect(cmd *Command, depth int) {
	ops := []string{"<<<", "<<-", "&>>", "<<", ">>", ">|", "<>", "&>", ">&", "<&", "<(", ">(", "<", ">"}
	op := ""
	for _, o := range ops {
		if strings.HasPrefix(p.s[p.i:], o) {
			op = o
			break
		}
	}
	p.i += len(op)
	if op == "<(" || op == ">(" {
		// Process substitution: a word whose commands run in a subshell.
		p.list(depth+1, ')')
		cmd.Words = append(cmd.Words, Word{Text: op + "...)", Raw: op + "...)"})
		return
	}
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
	if p.i >= len(p.s) || strings.IndexByte(";&|()<>\n", p.s[p.i]) >= 0 {
		p.problem("redirection " + op + " without a target")
		return
	}
	t := p.word(depth)
	cmd.Redirects = append(cmd.Redirects, Redirect{Op: op, Target: t})
	if op == "<<" || op == "<<-" {
		p.heredocs = append(p.heredocs, heredoc{delim: t.Text, quoted: t.Raw != t.Text, strip: op == "<<-", depth: depth})
	}
}

// readHeredocs reads the bodies of the pending here-documents, which start at p.i. A body is
// data, but data a shell reads as commands when it is a shell's input (sh <<EOF), so it is read
// as commands too: its geas commands are listed, and a reader that looks only for them errs on
// the side of seeing too much.
func (p *parser) readHeredocs() {
	docs := p.heredocs
	p.heredocs = nil
	for _, h := range docs {
		var body strings.Builder
		found := false
		for p.i < len(p.s) {
			end := strings.IndexByte(p.s[p.i:], '\n')
			var ln string
			if end < 0 {
				ln, p.i = p.s[p.i:], len(p.s)
			} else {
				ln, p.i = p.s[p.i:p.i+end], p.i+end+1
			}
			cmp := ln
			if h.strip {
				cmp = strings.TrimLeft(ln, "\t")
			}
			if cmp == h.delim {
				found = true
				break
			}
			body.WriteString(ln)
			body.WriteByte('\n')
		}
		if !found {
			p.problem("here-document without its delimiter " + strconv.Quote(h.delim))
		}
		sub := &parser{s: body.String(), line: p.line}
		if h.depth+1 > maxDepth {
			p.problem("nested deeper than " + strconv.Itoa(maxDepth) + " levels")
			continue
		}
		sub.list(h.depth+1, 0)
	}
}

// skipArith skips an arithmetic expansion or command up to its "))", reading the substitutions
// inside it.
func (p *parser) skipArith(depth int) {
	open := 2
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '(':
			open++
			p.i++
		case c == ')':
			open--
			p.i++
			if open == 0 {
				return
			}
		case c == '$' && p.i+1 < len(p.s) && p.s[p.i+1] == '(' && !(p.i+2 < len(p.s) && p.s[p.i+2] == '('):
			p.i += 2
			p.list(depth+1, ')')
		case c == '`':
			p.backquote(depth)
		default:
			p.i++
		}
	}
	p.problem("unterminated (( or $((")
}

// word reads one word at p.i.
func (p *parser) word(depth int) Word {
	start := p.i
	var text strings.Builder
	literal := true
	prefix := -1 // length of the literal prefix, once an expansion is seen
	expand := func() {
		if literal {
			prefix = text.Len()
		}
		literal = false
	}
	first := true
	braces := 0
	for p.i < len(p.s) {
		c := p.s[p.i]
		if strings.IndexByte(" \t\r\n;&|()<>", c) >= 0 {
			break
		}
		switch {
		case c == '\\':
			if p.i+1 >= len(p.s) {
				p.i++
				continue
			}
			if p.s[p.i+1] == '\n' {
				p.i += 2
				continue
			}
			_, n := utf8.DecodeRuneInString(p.s[p.i+1:])
			text.WriteString(p.s[p.i+1 : p.i+1+n])
			p.i += 1 + n
		case c == '\'':
			end := strings.IndexByte(p.s[p.i+1:], '\'')
			if end < 0 {
				p.problem("unterminated ' quote")
				text.WriteString(p.s[p.i+1:])
				p.i = len(p.s)
				expand()
				continue
			}
			text.WriteString(p.s[p.i+1 : p.i+1+end])
			p.i += end + 2
		case c == '"':
			p.i++
			if !p.doubleQuoted(&text, depth, expand) {
				expand()
			}
		case c == '$' && p.i+1 < len(p.s) && p.s[p.i+1] == '\'':
			p.i += 2
			if !p.ansiC(&text) {
				expand()
			}
		case c == '$' && p.i+1 < len(p.s) && p.s[p.i+1] == '"':
			p.i += 2
			if !p.doubleQuoted(&text, depth, expand) {
				expand()
			}
		case c == '$':
			expand()
			p.dollar(&text, depth)
		case c == '`':
			expand()
			from := p.i
			p.backquote(depth)
			text.WriteString(p.s[from:p.i])
		case c == '*' || c == '?' || c == '[':
			expand()
			text.WriteByte(c)
			p.i++
		case c == '~' && first:
			expand()
			text.WriteByte(c)
			p.i++
		case c == '{':
			braces++
			text.WriteByte(c)
			p.i++
		case c == ',' && braces > 0:
			expand() // {a,b} brace expansion
			text.WriteByte(c)
			p.i++
		case c == '}':
			if braces > 0 {
				braces--
			}
			text.WriteByte(c)
			p.i++
		default:
			_, n := utf8.DecodeRuneInString(p.s[p.i:])
			text.WriteString(p.s[p.i : p.i+n])
			p.i += n
		}
		first = false
	}
	w := Word{Text: text.String(), Raw: p.s[start:p.i], Literal: literal}
	if literal {
		w.Prefix = w.Text
	} else {
		w.Prefix = w.Text[:prefix]
	}
	return w
}

// doubleQuoted reads a "..." body after its opening quote, through the closing one. It returns
// false when the body holds an expansion or is unterminated.
func (p *parser) doubleQuoted(text *strings.Builder, depth int, expand func()) bool {
	ok := true
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return ok
		case c == '\\' && p.i+1 < len(p.s):
			switch n := p.s[p.i+1]; n {
			case '$', '`', '"', '\\':
				text.WriteByte(n)
				p.i += 2
			case '\n':
				p.i += 2
			default:
				text.WriteByte('\\')
				p.i++
			}
		case c == '$' && p.i+1 < len(p.s) && (isNameStart(p.s[p.i+1]) || strings.IndexByte("{(@*#?$!-0123456789", p.s[p.i+1]) >= 0):
			expand()
			ok = false
			p.dollar(text, depth)
		case c == '`':
			expand()
			ok = false
			from := p.i
			p.backquote(depth)
			text.WriteString(p.s[from:p.i])
		default:
			text.WriteByte(c)
			p.i++
		}
	}
	p.problem(`unterminated " quote`)
	return false
}

// ansiC reads a $'...' body after its opening quote, through the closing one, decoding its
// escapes. It returns false for an escape it does not decode (\c, \E...) or an unterminated body.
func (p *parser) ansiC(text *strings.Builder) bool {
	ok := true
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '\'' {
			p.i++
			return ok
		}
		if c != '\\' || p.i+1 >= len(p.s) {
			text.WriteByte(c)
			p.i++
			continue
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case 'n':
			text.WriteByte('\n')
		case 't':
			text.WriteByte('\t')
		case 'r':
			text.WriteByte('\r')
		case 'a':
			text.WriteByte('\a')
		case 'b':
			text.WriteByte('\b')
		case 'f':
			text.WriteByte('\f')
		case 'v':
			text.WriteByte('\v')
		case 'e', 'E':
			text.WriteByte(0x1b)
		case '\\', '\'', '"', '?':
			text.WriteByte(e)
		case 'x':
			v, n := p.hex(2)
			if n == 0 {
				ok = false
			}
			text.WriteByte(byte(v))
		case 'u', 'U':
			size := 4
			if e == 'U' {
				size = 8
			}
			v, n := p.hex(size)
			if n == 0 || v > utf8.MaxRune {
				ok = false
				continue
			}
			text.WriteRune(rune(v))
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(e - '0')
			for k := 0; k < 2 && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '7'; k++ {
				v = v*8 + int(p.s[p.i]-'0')
				p.i++
			}
			text.WriteByte(byte(v))
		default:
			ok = false
			text.WriteByte('\\')
			text.WriteByte(e)
		}
	}
	p.problem("unterminated $' quote")
	return false
}

// hex reads up to max hex digits at p.i.
func (p *parser) hex(max int) (v, n int) {
	for n < max && p.i < len(p.s) {
		d, err := strconv.ParseUint(p.s[p.i:p.i+1], 16, 8)
		if err != nil {
			break
		}
		v = v*16 + int(d)
		n++
		p.i++
	}
	return v, n
}

// dollar reads an expansion at p.i ('$'), writing it as written to text, and reads the
// commands of a command substitution.
func (p *parser) dollar(text *strings.Builder, depth int) {
	from := p.i
	p.i++
	switch {
	case p.i >= len(p.s):
	case strings.HasPrefix(p.s[p.i:], "(("):
		p.i += 2
		p.skipArith(depth)
	case p.s[p.i] == '(':
		p.i++
		p.list(depth+1, ')')
	case p.s[p.i] == '{':
		p.braceParam(depth)
	case isNameStart(p.s[p.i]):
		for p.i < len(p.s) && (isNameStart(p.s[p.i]) || p.s[p.i] >= '0' && p.s[p.i] <= '9') {
			p.i++
		}
	case strings.IndexByte("@*#?$!-0123456789", p.s[p.i]) >= 0:
		p.i++
	}
	text.WriteString(p.s[from:p.i])
}

// braceParam skips a ${...} expansion at p.i ('{'), reading the substitutions inside it.
func (p *parser) braceParam(depth int) {
	p.i++
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case '}':
			p.i++
			return
		case '\\':
			p.i += 2
		case '\'':
			if end := strings.IndexByte(p.s[p.i+1:], '\''); end >= 0 {
				p.i += end + 2
			} else {
				p.i = len(p.s)
			}
		case '"':
			p.i++
			var sink strings.Builder
			p.doubleQuoted(&sink, depth, func() {})
		case '$':
			var sink strings.Builder
			p.dollar(&sink, depth)
		case '`':
			p.backquote(depth)
		default:
			p.i++
		}
	}
	p.problem("unterminated ${")
}

// backquote reads a `...` substitution at p.i and the commands inside it.
func (p *parser) backquote(depth int) {
	p.i++
	var body strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '`' {
			p.i++
			if depth+1 > maxDepth {
				p.problem("nested deeper than " + strconv.Itoa(maxDepth) + " levels")
				return
			}
			sub := &parser{s: body.String(), line: p.line}
			sub.list(depth+1, 0)
			return
		}
		if c == '\\' && p.i+1 < len(p.s) && strings.IndexByte("$`\\", p.s[p.i+1]) >= 0 {
			body.WriteByte(p.s[p.i+1])
			p.i += 2
			continue
		}
		body.WriteByte(c)
		p.i++
	}
	p.problem("unterminated ` substitution")
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
