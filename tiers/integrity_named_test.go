package tiers

import (
	"strings"
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

// TestMakeRecipesOfTheTargetAreFollowed: a make run's targets (the first one by default) and their
// prerequisites give their recipe lines, the makefiles it includes are named, and the recipes of
// other targets and pattern rules are not followed.
func TestMakeRecipesOfTheTargetAreFollowed(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"sub/Makefile": "CC := cc\ninclude rules.mk\n-include $(DEPS) missing.mk\nsinclude *.mk $(wildcard conf/*.mk ../x/*.mk)\n.PHONY: check\nbuild:\n\tsh build.sh\n",
		"sub/rules.mk": "check: lint unit ; @sh inline.sh\nlint:\n\t-sh lint.sh \\\n\t  --strict\nunit: build\n\t+python3 -m unittest\n%.o: %.c\n\tsh pattern.sh\n",
	}
	read := func(p string) ([]byte, bool, error) {
		s, ok := files[p]
		return []byte(s), ok, nil
	}
	f, err := followMake(makeRun{Dir: "sub", Targets: []string{"check"}}, read)
	assert.NoError(t, err)
	assert.Equal(t, []string{"sub/rules.mk"}, f.Includes)
	assert.Equal(t, []string{"sub/*.mk", "sub/conf/*.mk", "x/*.mk"}, f.IncludeGlobs, "make includes every file a pattern matches")
	want := []string{"sh inline.sh", "sh lint.sh --strict", "python3 -m unittest", "sh build.sh"}
	assert.Equal(t, want, trimAll(f.Recipes))
	f, err = followMake(makeRun{Dir: "sub"}, read)
	assert.NoError(t, err)
	assert.Equal(t, want, trimAll(f.Recipes), "the first target read (in the included file) is the default")
	files["sub/Makefile"] = "build:\n\tsh build.sh\ninclude rules.mk\n"
	f, err = followMake(makeRun{Dir: "sub"}, read)
	assert.NoError(t, err)
	assert.Equal(t, []string{"sh build.sh"}, f.Recipes, "the first target is the default")
}

func trimAll(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strings.Join(strings.Fields(x), " ")
	}
	return out
}

// TestPythonModuleRunsNameTheirShadows: python -m MOD runs MOD.py or MOD/ of its directory before
// the standard library's, so those paths are protected as paths.
func TestPythonModuleRunsNameTheirShadows(t *testing.T) {
	t.Parallel()
	n := namesOf([][2]string{{"cd py && python3 -X dev -m unittest discover -s tests", ""}, {"python -m pkg.runner", "svc"}, {"python3 check.py; python3 -c 'import x' -m y", ""}, {"python3 -munittest", "z"}})
	for _, p := range []string{"py/unittest.py", "py/unittest/__init__.py", "py/unittest/__main__.py", "svc/pkg/runner.py", "svc/pkg/__init__.py", "z/unittest.py"} {
		assert.Contains(t, n.Shadows, p)
	}
	assert.Len(t, n.Shadows, 10)
}
