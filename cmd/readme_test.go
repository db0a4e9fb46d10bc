package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeBlock returns the command lines of the README's walkthrough: the fenced block between
// <!-- walkthrough:begin --> and <!-- walkthrough:end -->, without blank and comment lines.
func readmeBlock(t *testing.T, readme string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "<!-- walkthrough:begin -->")
	require.True(t, ok, "README.md has no <!-- walkthrough:begin --> marker")
	block, _, ok := strings.Cut(rest, "<!-- walkthrough:end -->")
	require.True(t, ok, "README.md has no <!-- walkthrough:end --> marker")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "```") || strings.HasPrefix(l, "#") {
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// scriptCommands returns the README lines that the testscript's walkthrough section runs: each
// command between "# walkthrough:begin" and "# walkthrough:end" turned back into the shell line
// it stands for; assertions (stdout, stderr, jsonq, ...) and comments are not commands.
func scriptCommands(t *testing.T, script string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(script, "# walkthrough:begin\n")
	require.True(t, ok, "the testscript has no # walkthrough:begin line")
	section, _, ok := strings.Cut(rest, "# walkthrough:end\n")
	require.True(t, ok, "the testscript has no # walkthrough:end line")
	var lines []string
	for _, l := range strings.Split(section, "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "! ")
		switch {
		case strings.HasPrefix(l, "exec sh -c '") && strings.HasSuffix(l, "'"):
			inner := strings.TrimSuffix(strings.TrimPrefix(l, "exec sh -c '"), "'")
			lines = append(lines, strings.ReplaceAll(inner, "''", "'"))
		case strings.HasPrefix(l, "exec "):
			lines = append(lines, strings.TrimPrefix(l, "exec "))
		case strings.HasPrefix(l, "status "):
			f := strings.SplitN(l, " ", 3)
			require.Len(t, f, 3, "status line %q", l)
			lines = append(lines, f[2])
		case strings.HasPrefix(l, "cd "):
			lines = append(lines, l)
		}
	}
	return lines
}

// TestReadmeWalkthroughIsTheScript: the README's "Gate your own repository" block is exactly what
// testdata/script/readme_walkthrough.txtar runs, line for line, so neither can change alone.
func TestReadmeWalkthroughIsTheScript(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	script, err := os.ReadFile(filepath.Join("..", "testdata", "script", "readme_walkthrough.txtar"))
	require.NoError(t, err)
	want := readmeBlock(t, string(readme))
	require.NotEmpty(t, want)
	assert.Equal(t, want, scriptCommands(t, string(script)))
	geasOrGit := 0
	for _, l := range want {
		for _, part := range strings.Split(l, "&&") {
			if f := strings.Fields(part); len(f) > 0 && (f[0] == "geas" || f[0] == "git") {
				geasOrGit++
			}
		}
	}
	t.Logf("the walkthrough runs %d geas and git commands on %d lines", geasOrGit, len(want))
}

// TestScriptCommandsMapping pins the mapping from testscript lines to README lines, so that a
// mistake in it cannot make the comparison above vacuous.
func TestScriptCommandsMapping(t *testing.T) {
	script := "x\n# walkthrough:begin\nexec git init -q a\ncd a\nstdout 'x'\n! exec geas gate\nstatus 1 geas gate --task t\n" +
		"exec sh -c 'echo ''a b'' > f && git commit -qam ''m'''\n# a comment\n# walkthrough:end\nexec geas after\n"
	assert.Equal(t, []string{"git init -q a", "cd a", "geas gate", "geas gate --task t", "echo 'a b' > f && git commit -qam 'm'"},
		scriptCommands(t, script))
	readme := "<!-- walkthrough:begin -->\n```sh\ngit init -q a\n# note\n\ncd a\n```\n<!-- walkthrough:end -->\ngeas x\n"
	assert.Equal(t, []string{"git init -q a", "cd a"}, readmeBlock(t, readme))
}
