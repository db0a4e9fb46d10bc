package cmd

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/report"
)

// TestFormatHelpListsWhatEachCommandAccepts: every command's --format help is generated from the
// formats it accepts, so geas gate's names sarif and geas task show's names only text and json;
// every accepted format has a renderer or is text/json, and -o exists exactly where the report
// formats are accepted.
func TestFormatHelpListsWhatEachCommandAccepts(t *testing.T) {
	root := newRootCmd(&globalOptions{})
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		f := c.Flag("format")
		require.NotNil(t, f, "%s has --format", c.CommandPath())
		accepted := acceptedFormats(c)
		assert.Equal(t, "output format: "+formatList(accepted), f.Usage, c.CommandPath())
		_, extra := commandFormats[c.CommandPath()]
		assert.Equal(t, extra, c.Flags().Lookup("output") != nil, "%s: -o where the report formats are", c.CommandPath())
		for _, name := range accepted {
			assert.True(t, name == formatText || name == formatJSON || report.For(name) != nil, "%s: %s", c.CommandPath(), name)
		}
		seen++
		for _, sc := range c.Commands() {
			walk(sc)
		}
	}
	walk(root)
	assert.Greater(t, seen, 10)
	assert.Len(t, commandFormats, 2)
	for path := range commandFormats {
		c, _, err := root.Find(strings.Fields(path)[1:])
		require.NoError(t, err)
		assert.Equal(t, path, c.CommandPath(), "commandFormats names a command that exists")
	}

	var out bytes.Buffer
	require.Equal(t, ExitOK, Run(t.Context(), []string{"gate", "--help"}, nil, &out, &out))
	assert.Contains(t, out.String(), "output format: text, json, junit, github or sarif")
	assert.Equal(t, 1, strings.Count(out.String(), "--format string"), "geas gate's own --format hides the global one")
	out.Reset()
	require.Equal(t, ExitOK, Run(t.Context(), []string{"task", "show", "--help"}, nil, &out, &out))
	assert.Contains(t, out.String(), "output format: text or json")
	assert.NotContains(t, out.String(), "junit")
}

// TestOutputIntoAnUnwritableDirectoryIsRefusedBeforeTheRun: a directory that takes no new file
// is a usage error naming it.
func TestOutputIntoAnUnwritableDirectoryIsRefusedBeforeTheRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(dir, 0o500))
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if os.Geteuid() == 0 { // root writes into any directory, but not into /proc
		if runtime.GOOS != "linux" {
			t.Skip("root writes into any directory")
		}
		dir = "/proc"
	}
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), []string{"-C", t.TempDir(), "gate", "--task", "t1", "-o", "junit=" + filepath.Join(dir, "r.xml")}, nil, &stdout, &stderr)
	assert.Equal(t, ExitUsage, code)
	assert.Contains(t, stderr.String(), "cannot create a file in "+dir)
	_, err := os.Stat(filepath.Join(dir, "r.xml"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// TestOutputsAreWrittenInEveryFormat: writeGate writes each -o file as its renderer does, stdout
// keeps --format's report, and a file lost after the check is named on stderr while the others
// are written.
func TestOutputsAreWrittenInEveryFormat(t *testing.T) {
	results := goldenResults(t)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	g := &globalOptions{format: formatText, stdout: &stdout, stderr: &stderr}
	for _, tc := range []struct{ format, golden string }{
		{report.JSON, "gate.json"}, {report.JUnit, "gate.junit.xml"}, {report.GitHub, "gate.github.txt"}, {report.SARIF, "gate.sarif"},
	} {
		g.outFiles = append(g.outFiles, outputFile{format: tc.format, path: filepath.Join(dir, tc.golden), shown: tc.golden})
	}
	g.outFiles = append(g.outFiles, outputFile{format: report.Text, path: filepath.Join(dir, "gone", "x.txt"), shown: "gone/x.txt"})
	require.NoError(t, g.writeGate(results))
	for _, o := range g.outFiles[:4] {
		b, err := os.ReadFile(o.path)
		require.NoError(t, err)
		checkGolden(t, o.shown, b)
	}
	checkGolden(t, "gate.txt", stdout.Bytes())
	assert.Contains(t, stderr.String(), "geas: -o text=gone/x.txt was not written:")
	assert.Equal(t, 1, strings.Count(stderr.String(), "\n"))
}

// TestUnderDirComparesFiles: underDir finds top among dir's ancestors by file identity, so a
// spelling that differs from top's name but opens the same directory counts (here a path through
// a link, which no name comparison sees without resolving it), and a sibling does not.
func TestUnderDirComparesFiles(t *testing.T) {
	root := t.TempDir()
	top := filepath.Join(root, ".geas")
	require.NoError(t, os.MkdirAll(filepath.Join(top, "missions", "m1"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "out"), 0o755))
	assert.True(t, underDir(top, filepath.Join(top, "missions", "m1")))
	assert.True(t, underDir(top, top))
	assert.False(t, underDir(top, filepath.Join(root, "out")))
	assert.False(t, underDir(top, root))
	if err := os.Symlink(top, filepath.Join(root, "alias")); err == nil {
		assert.True(t, underDir(top, filepath.Join(root, "alias", "missions")))
	}
	assert.False(t, underDir(filepath.Join(root, "missing"), root))
}
