package tiers

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/policy"
)

// Appending to a test file is allowed where the runner loads every test file into one process
// (appendSafe): a new test function or class there adds a check. In Python and Ruby, though, lines
// appended at the end of a module run in that module: `class FarewellTest(TestCase): pass` or
// `def farewell(n): return "Goodbye, " + n + "!"` replaces what the base's tests are or call, an
// indented line continues the base's last class, and a top-level statement patches whatever it
// likes. appendRebinds tells these apart from new tests, from the text alone.

var (
	pyDef     = regexp.MustCompile(`^(?:async\s+def|def|class)\s+([A-Za-z_]\w*)`)
	pyImport  = regexp.MustCompile(`^(?:from\s+[\w.]+\s+)?import\s+(.*)$`)
	rubyDef   = regexp.MustCompile(`^(?:class|module|def)\s+(?:self\.)?([A-Za-z_][\w:]*[?!=]?)`)
	baseWord  = regexp.MustCompile(`\w+`)
	rubyBlock = regexp.MustCompile(`^(?:end\b|require(?:_relative)?\b|(?:RSpec\.)?(?:describe|context|shared_examples)\b)`)
)

// appendRebinds says why lines appended to a Python or Ruby test file are not only new tests ("" when
// they are, and for the other languages): they continue the base's last block, bind a name the base
// uses, or run a top-level statement other than a definition, a decorator or an import.
func appendRebinds(lang, base, added string) string {
	if lang != policy.LangPython && lang != policy.LangRuby {
		return ""
	}
	var words map[string]bool
	used := func(name string) bool {
		if words == nil {
			words = map[string]bool{}
			for _, w := range baseWord.FindAllString(base, -1) {
				words[w] = true
			}
		}
		return words[strings.TrimRight(name, "?!=")]
	}
	top := false // a top-level definition has begun
	for line := range strings.Lines(added) {
		l := strings.TrimRight(line, "\r\n")
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' {
			if !top && lang == policy.LangPython {
				return fmt.Sprintf("continue the base's last block (%q)", text.Truncate(t, 60))
			}
			continue
		}
		switch lang {
		case policy.LangPython:
			if m := pyDef.FindStringSubmatch(l); m != nil {
				if used(m[1]) {
					return fmt.Sprintf("define %s, a name the base uses", m[1])
				}
				top = true
				continue
			}
			if strings.HasPrefix(l, "@") {
				top = true
				continue
			}
			if m := pyImport.FindStringSubmatch(l); m != nil {
				names := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(m[1]), "("), ")")
				if strings.ContainsAny(names, "(\\") {
					return fmt.Sprintf("import over more than one line (%q)", text.Truncate(t, 60))
				}
				for _, n := range strings.Split(names, ",") {
					f := strings.Fields(n)
					if len(f) == 0 {
						continue
					}
					name := f[len(f)-1] // x, x as y
					name, _, _ = strings.Cut(name, ".")
					if used(name) {
						return fmt.Sprintf("import %s, a name the base uses", name)
					}
				}
				continue
			}
			if strings.HasPrefix(t, "if __name__") {
				top = true
				continue
			}
		case policy.LangRuby:
			if m := rubyDef.FindStringSubmatch(l); m != nil {
				name := m[1][strings.LastIndex(m[1], ":")+1:]
				if used(name) {
					return fmt.Sprintf("define %s, a name the base uses", name)
				}
				continue
			}
			if rubyBlock.MatchString(l) {
				continue
			}
		}
		return fmt.Sprintf("run a top-level statement (%q)", text.Truncate(t, 60))
	}
	return ""
}
