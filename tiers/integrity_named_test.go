package tiers

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestEvalCommandsNameTheirFilesAndConfiguration: the words of an eval command are candidate
// paths relative to its workdir (after cd, inside sh -c, with quotes and options removed), make
// names its Makefile, npm, pnpm and yarn name one package.json script (with its pre and post
// scripts), and pytest names its configuration tables.
func TestEvalCommandsNameTheirFilesAndConfiguration(t *testing.T) {
	t.Parallel()
	n := namesOf([][2]string{
		{`sh test/farewell_test.sh && echo done > out.txt`, ""},
		{`cd app && ./run_tests.sh "spaced name.sh" --config=ci/check.cfg`, ""},
		{`sh -c 'bash -e "scripts/ver ify.sh"'`, "svc"},
		{`FOO=1 env python3 -m unittest test.test_greet`, ""},
		{`cd /tmp && sh evil.sh; sh ../outside.sh`, ""},
		{`grep -q verbose README.md && node --test test/a.test.js && bats t/x.bats t/y.bats`, ""},
		{`python3 -W error check.py --fast data.txt; make -f ci.mk check`, ""},
	})
	for _, p := range []string{"test/farewell_test.sh", "app/run_tests.sh", "svc/scripts/ver ify.sh", "test/test_greet.py",
		"test/a.test.js", "t/x.bats", "t/y.bats", "check.py", "ci.mk"} {
		assert.Contains(t, n.Words, p)
	}
	for _, p := range []string{"README.md", "out.txt", "app/spaced name.sh", "app/ci/check.cfg", "data.txt", "evil.sh", "../outside.sh", "outside.sh", "error"} {
		assert.NotContains(t, n.Words, p, "data of a command, or a path outside the project, is not what it executes")
	}

	keys := func(cmd, dir string) []string {
		var out []string
		n := namesOf([][2]string{{cmd, dir}})
		for _, k := range n.Keys {
			out = append(out, k.File+"#"+k.Key)
		}
		for f := range n.Makefiles {
			out = append(out, f)
		}
		return out
	}
	assert.ElementsMatch(t, []string{"package.json#scripts.pretest", "package.json#scripts.test", "package.json#scripts.posttest"}, keys("npm test", ""))
	assert.ElementsMatch(t, []string{"web/package.json#scripts.prelint", "web/package.json#scripts.lint", "web/package.json#scripts.postlint"}, keys("npm run lint --silent", "web"))
	assert.ElementsMatch(t, []string{"package.json#scripts.pretest:unit", "package.json#scripts.test:unit", "package.json#scripts.posttest:unit"}, keys("pnpm test:unit", ""))
	assert.ElementsMatch(t, []string{"package.json#scripts.prespec", "package.json#scripts.spec", "package.json#scripts.postspec"}, keys("yarn run spec", ""))
	assert.Empty(t, keys("yarn install", ""), "yarn install runs no script")
	assert.Empty(t, keys("npm ci", ""))
	assert.ElementsMatch(t, []string{"pyproject.toml#tool.pytest.ini_options", "setup.cfg#tool:pytest"}, keys("pytest -q", ""))
	assert.ElementsMatch(t, []string{"pyproject.toml#tool.pytest.ini_options", "setup.cfg#tool:pytest"}, keys("python3 -m pytest tests", ""))
	assert.ElementsMatch(t, []string{"GNUmakefile", "makefile", "Makefile"}, keys("make test", ""))
	assert.ElementsMatch(t, []string{"sub/GNUmakefile", "sub/makefile", "sub/Makefile"}, keys("make -C sub check", ""))
	assert.Empty(t, keys("go test ./...", ""))
}

// TestPytestConfigurationIsReadAsItsTable: the pytest table of pyproject.toml (header spaces and
// quotes ignored) and every other line that mentions pytest are what is compared; the rest of the
// file is not.
func TestPytestConfigurationIsReadAsItsTable(t *testing.T) {
	t.Parallel()
	base := "[project]\nname = \"x\"\n[tool.pytest.ini_options]\naddopts = \"-q\"\n[tool.ruff]\nline-length = 100\n"
	a, ok := sectionText([]byte(base), "tool.pytest.ini_options")
	assert.True(t, ok)
	b, _ := sectionText([]byte("[project]\nname = \"y\"\n[ tool . pytest . ini_options ]\naddopts = \"-q\"\n[tool.ruff]\nline-length = 120\n"), "tool.pytest.ini_options")
	assert.NotEqual(t, a, b, "the header is part of the text, so a respelled header is a change")
	c, _ := sectionText([]byte("[project]\nname = \"y\"\n[tool.pytest.ini_options]\naddopts = \"-q\"\n[tool.ruff]\nline-length = 120\n"), "tool.pytest.ini_options")
	assert.Equal(t, a, c, "edits outside the table are no change to it")
	d, _ := sectionText([]byte(base+"[tool]\npytest.ini_options.addopts = \"-k not slow\"\n"), "tool.pytest.ini_options")
	assert.NotEqual(t, a, d, "a dotted key that reaches the table is a change")
	_, ok = sectionText([]byte("[project]\n"), "tool.pytest.ini_options")
	assert.False(t, ok)
	s, ok := sectionText([]byte("[metadata]\nname=x\n[tool:pytest]\naddopts = --ignore=tests/a.py\n"), "tool:pytest")
	assert.True(t, ok)
	assert.Contains(t, s, "--ignore")
}

// TestLineDeltaCountsTheNetChange: moved lines are no change, a CRLF line is one removed and one
// added.
func TestLineDeltaCountsTheNetChange(t *testing.T) {
	t.Parallel()
	r, a := lineDelta("a\nb\nc\n", "c\na\nb\n")
	assert.Equal(t, [2]int{0, 0}, [2]int{r, a})
	r, a = lineDelta("a\nb\n", "a\r\nb\n")
	assert.Equal(t, [2]int{1, 1}, [2]int{r, a})
	r, a = lineDelta("got=1\n[ x ] || exit 1\necho ok\n", "echo ok\n")
	assert.Equal(t, [2]int{2, 0}, [2]int{r, a})
}

// TestPackageJSONKeysAreReadAsJSON: a script, a nested value as compact JSON, an absent key, a
// file that is not JSON (a change: fail closed), a scripts value that is not an object (absent).
func TestPackageJSONKeysAreReadAsJSON(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"scripts": {"test": "node --test"}, "jest": {"testPathIgnorePatterns": ["a"]}}`)
	v, ok, bad := jsonValue(doc, []string{"scripts", "test"}, "")
	assert.Equal(t, "node --test", v)
	assert.True(t, ok)
	assert.Empty(t, bad)
	v, ok, _ = jsonValue(doc, []string{"jest"}, "")
	assert.Equal(t, `{"testPathIgnorePatterns":["a"]}`, v)
	assert.True(t, ok)
	_, ok, bad = jsonValue(doc, []string{"mocha"}, "")
	assert.False(t, ok)
	assert.Empty(t, bad)
	_, _, bad = jsonValue([]byte(`{"scripts": `), []string{"scripts", "test"}, "")
	assert.NotEmpty(t, bad)
	_, ok, bad = jsonValue([]byte(`{"scripts": "x"}`), []string{"scripts", "test"}, "")
	assert.False(t, ok)
	assert.Empty(t, bad)
}
