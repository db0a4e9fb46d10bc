package shellcmd

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// texts are the words of each command of l, a word the shell would change marked with "~".
func texts(l Line) [][]string {
	var out [][]string
	for _, c := range l.Commands {
		var ws []string
		for _, w := range c.Words {
			t := w.Text
			if !w.Literal {
				t = "~" + t
			}
			ws = append(ws, t)
		}
		out = append(out, ws)
	}
	return out
}

// TestWordsAreReadAsTheProgramReceivesThem: quotes, escapes and ANSI-C strings are removed as the
// shell removes them, so every spelling of a word reads the same.
func TestWordsAreReadAsTheProgramReceivesThem(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		`geas evidence add --agent design-authority`:      {"geas", "evidence", "add", "--agent", "design-authority"},
		`geas --agent "design-authority"`:                 {"geas", "--agent", "design-authority"},
		`geas --agent 'design-authority'`:                 {"geas", "--agent", "design-authority"},
		`geas --agent design-author""ity`:                 {"geas", "--agent", "design-authority"},
		`geas --agent design\-authority`:                  {"geas", "--agent", "design-authority"},
		`geas --agent=$'design-\x61uthority'`:             {"geas", "--agent=design-authority"},
		`geas --agent=$'\144esign-authority'`:             {"geas", "--agent=design-authority"},
		`geas --agent=$'\u0064esign-authority'`:           {"geas", "--agent=design-authority"},
		`geas "--agent=a b" "x\"y" "\$z"`:                 {"geas", "--agent=a b", `x"y`, "$z"},
		"geas evi\\\ndence add":                           {"geas", "evidence", "add"},
		`geas --data '{"a": "b"}'`:                        {"geas", "--data", `{"a": "b"}`},
		`geas --agent $A`:                                 {"geas", "--agent", "~$A"},
		`geas --agent "${A:-x}"`:                          {"geas", "--agent", "~${A:-x}"},
		`geas --agent "$(cat who)"`:                       {"geas", "--agent", "~$(cat who)"},
		`ls *.json ~/x {a,b} [ab]`:                        {"ls", "~*.json", "~~/x", "~{a,b}", "~[ab]"},
		`echo {} a{b}c`:                                   {"echo", "{}", "a{b}c"},
		`X=1 Y="2 3" geas gate`:                           {"X=1", "Y=2 3", "geas", "gate"},
		`geas gate # --agent design-authority`:            {"geas", "gate"},
		`if true; then geas gate; fi`:                     nil, // checked below
		`geas --data $"text"`:                             {"geas", "--data", "text"},
		`a#b`:                                             {"a#b"},
		`echo é "ü" 'ß'`:                                  {"echo", "é", "ü", "ß"},
		`geas --agent=$'\e'`:                              {"geas", "--agent=\x1b"},
		`geas --task="$T"`:                                {"geas", "~--task=$T"},
		`printf '%s' 'it'"'"'s'`:                          {"printf", "%s", "it's"},
		`true && geas evidence add || false; geas gate &`: nil,
	} {
		if want == nil {
			continue
		}
		l := Parse(in)
		all := texts(l)
		require.NotEmpty(t, all, in)
		assert.Equal(t, want, all[len(all)-1], in)
		assert.Empty(t, l.Problems, in)
	}
	w := Parse(`geas --task="$T"`).Commands[0].Words[1]
	assert.Equal(t, "--task=", w.Prefix)
	assert.Equal(t, `--task="$T"`, w.Raw)
}

// TestEveryCommandOfALineIsRead: commands after operators, in subshells, in command and process
// substitutions, in backquotes, after reserved words and in here-documents are all listed, each
// in the order it ends (a substitution's commands before the command that holds them).
func TestEveryCommandOfALineIsRead(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][][]string{
		`a; b && c || d | e |& f & g`:      {{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}},
		"a\nb\n\nc":                        {{"a"}, {"b"}, {"c"}},
		`(a; (b)) && { c; }`:               {{"a"}, {"b"}, {"c"}},
		`x=$(a $(b)) y`:                    {{"b"}, {"a", "~$(b)"}, {"~x=$(a $(b))", "y"}},
		"echo `a b`":                       {{"a", "b"}, {"echo", "~`a b`"}},
		"geas --agent `cat who`":           {{"cat", "who"}, {"geas", "--agent", "~`cat who`"}},
		`diff <(a) >(b)`:                   {{"a"}, {"b"}, {"diff", "~<(...)", "~>(...)"}},
		`if a; then b; elif c; else d; fi`: {{"a"}, {"b"}, {"c"}, {"d"}},
		`while a; do b; done; ! c`:         {{"a"}, {"b"}, {"c"}},
		"bash <<EOF\na $X\nb\nEOF\nc":      {{"bash"}, {"a", "~$X"}, {"b"}, {"c"}},
		"bash <<-'E'\n\ta\n\tE\nc":         {{"bash"}, {"a"}, {"c"}},
		`echo $((1 + $(a))) "$(b)"`:        {{"a"}, {"b"}, {"echo", "~$((1 + $(a)))", "~$(b)"}},
		`echo "${X:-$(a)}"`:                {{"a"}, {"echo", "~${X:-$(a)}"}},
		"echo \"`a`\"":                     {{"a"}, {"echo", "~`a`"}},
		`time -p a`:                        {{"-p", "a"}},
		`a 2>&1 >out <in 3<>f &>g >|h >>i`: {{"a"}},
		`a >$(b)`:                          {{"b"}, {"a"}},
	} {
		l := Parse(in)
		assert.Equal(t, want, texts(l), in)
		assert.Empty(t, l.Problems, in)
	}
}

// TestRedirectionsSayWhetherTheyWrite: output redirections write their target; duplications of
// a descriptor and input redirections do not.
func TestRedirectionsSayWhetherTheyWrite(t *testing.T) {
	t.Parallel()
	c := Parse(`a >o1 2>o2 >>o3 >|o4 &>o5 &>>o6 <>o7 >&o8 2>&1 >&- <i <<<s <&0`).Commands[0]
	var writes, others []string
	for _, r := range c.Redirects {
		if r.Writes() {
			writes = append(writes, r.Target.Text)
		} else {
			others = append(others, r.Op+r.Target.Text)
		}
	}
	assert.Equal(t, []string{"o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8"}, writes)
	assert.Equal(t, []string{">&1", ">&-", "<i", "<<<s", "<&0"}, others)
}

// TestWhatCannotBeReadIsNamed: unterminated quotes and substitutions, a here-document without its
// delimiter and nesting past the bound are Problems; the reader never loops or overflows.
func TestWhatCannotBeReadIsNamed(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`a 'b`, `a "b`, `a $(b`, "a `b", `a ${b`, `a $'b`, "a <<EOF\nb", `a )`, `a >`, `a $((1`,
		strings.Repeat("$(", 100) + "a" + strings.Repeat(")", 100),
		strings.Repeat("( ", 100) + "a" + strings.Repeat(")", 100),
	} {
		assert.NotEmpty(t, Parse(in).Problems, in)
	}
}

// TestArgsSkipAssignments: Args starts at the program.
func TestArgsSkipAssignments(t *testing.T) {
	t.Parallel()
	args := Parse(`A=1 B_2=x geas gate C=3`).Commands[0].Args()
	require.Len(t, args, 3)
	assert.Equal(t, "geas", args[0].Text)
	assert.Equal(t, "C=3", args[2].Text)
	assert.False(t, IsAssignment(Word{Raw: "1A=x"}))
	assert.False(t, IsAssignment(Word{Raw: "--agent=x"}))
}

// quote is s as one single-quoted shell word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// FuzzParse: the reader never panics or loops, each word's literal Prefix starts its Text, and a
// line of single-quoted words reads back as exactly those words, each literal.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`geas evidence add --agent design-authority`, `a; b && (c | d) $(e "f" 'g') <<EOF`, "x\n`y`\nEOF",
		`$'\x41\u00e9\1' "${a:-$(b)}" $((1+2)) <(c) >(d) {a,b} ~ *`, `a 'b`, `a "b\"`, `a $(`, "\\\n",
	} {
		f.Add(s, "design-authority")
	}
	f.Fuzz(func(t *testing.T, line, word string) {
		l := Parse(line)
		for _, c := range l.Commands {
			if c.Depth > maxDepth+1 {
				t.Fatalf("depth %d past the bound", c.Depth)
			}
			for _, w := range c.Words {
				if !strings.HasPrefix(w.Text, w.Prefix) || (w.Literal && w.Prefix != w.Text) {
					t.Fatalf("word %q: prefix %q, literal %v", w.Text, w.Prefix, w.Literal)
				}
			}
		}
		if strings.ContainsRune(word, 0) {
			return
		}
		words := []string{"geas", word, line}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, quote(w))
		}
		back := Parse(strings.Join(quoted, " "))
		if len(back.Problems) > 0 || len(back.Commands) != 1 || len(back.Commands[0].Words) != 3 {
			t.Fatalf("quoted words %q read as %+v", words, back)
		}
		for i, w := range back.Commands[0].Words {
			if !w.Literal || w.Text != words[i] {
				t.Fatalf("word %d %q read as %q (literal %v)", i, words[i], w.Text, w.Literal)
			}
		}
	})
}
