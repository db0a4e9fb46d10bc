package tiers

import (
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stretchr/testify/assert"

	"github.com/geas-dev/geas/policy"
)

// TestTheProtectedTableCoversEachLanguagesTests: the default table protects the test files of
// every language by convention and the test-runner configuration, case-insensitively, and leaves
// the code alone.
func TestTheProtectedTableCoversEachLanguagesTests(t *testing.T) {
	t.Parallel()
	protected := policy.Default().Tests.Protected
	for _, p := range []string{
		"pkg/greet_test.go", "greet_test.go", "internal/x/testdata/in.txt", // Go
		"tests/test_greet.py", "test_greet.py", "pkg/greet_test.py", "conftest.py", "pytest.ini", "tox.ini", // Python
		"src/greet.test.ts", "web/__tests__/a.js", "a.spec.tsx", "jest.config.js", "vitest.config.mts", ".mocharc.yml", "karma.conf.js", ".nycrc.json", // JS/TS
		"tests/integration.rs",                                             // Rust
		"src/test/java/GreetTest.java", "app/src/test/kotlin/GreetTest.kt", // Java/Kotlin
		"spec/greet_spec.rb", "lib/greet_spec.rb", // Ruby
		"test/greet_test.sh", "t/greet.bats", // shell
		"phpunit.xml.dist", "codecov.yml",
		"Test/Greet_Test.GO", "CONFTEST.PY", // case-insensitive file systems
	} {
		assert.True(t, matchTable(p, protected), "%s is protected", p)
	}
	for _, p := range []string{"greet.go", "greet.py", "src/greet.ts", "src/lib.rs", "src/main/java/Greet.java", "lib/greet.rb", "greet.sh", "testing.go", "contest.py", "latest/x.go"} {
		assert.False(t, matchTable(p, protected), "%s is code, not a protected check", p)
	}
	for _, p := range []string{"conftest.py", "a/Conftest.py", "jest.config.ts", ".mocharc.js", "tox.ini", "py/.pytest.ini", "web/.npmrc", ".yarnrc", ".yarnrc.yml"} {
		assert.True(t, matchTable(p, runnerConfig), "%s is runner configuration", p)
	}
	assert.False(t, matchTable("tests/test_a.py", runnerConfig), "a test file is not runner configuration")
	assert.Equal(t, policy.LangPytestConfig, policy.LanguageOf("py/.pytest.ini"), "a hidden pytest.ini is scanned for -k and --deselect")
}

// TestTheCompiledTableMatchesAsDoublestar: the compiled glob table answers what doublestar answers
// for the table's globs, on the lower-cased path.
func TestTheCompiledTableMatchesAsDoublestar(t *testing.T) {
	t.Parallel()
	globs := append(policy.Default().Tests.Protected, "checks/**", "**/x[ab].go", "src/**/*.snap", "**/{a,b}.txt")
	paths := []string{"test", "test/x", "a/test", "a/test/b/c.go", "tests", "latest/x", "src/test/A.java", "x/src/test/y",
		"a_test.go", "dir/a_test.go", "a_test.gox", "conftest.py", "a/conftest.py", "aconftest.py", ".mocharc", ".mocharc.yml",
		"x.test.js", "x.test", "a.spec.ts", "jest.config.js", "jest.config", "checks/a", "a/checks/b", "xa.go", "a/xb.go", "src/a/b.snap",
		"a.txt", "c/b.txt", "Test/X_Test.GO", "spec", "a/spec/b", "t.bats", "phpunit.xml.dist", "__tests__/a.js", "testdata", "x/testdata/y"}
	table := newGlobTable(globs)
	for _, p := range paths {
		want := false
		for _, g := range globs {
			if ok, _ := doublestar.Match(strings.ToLower(g), strings.ToLower(p)); ok {
				want = true
			}
		}
		assert.Equal(t, want, table.match(p), p)
	}
}

// TestTestHelpersAreKnownByTheirContent: a file that imports its language's test framework (or, in
// shell, defines an assertion) is a test helper; code that merely mentions testing is not.
func TestTestHelpersAreKnownByTheirContent(t *testing.T) {
	t.Parallel()
	helpers := map[string][]string{
		policy.LangGo:     {"package checks\n\nimport \"testing\"\n", "import (\n\t\"fmt\"\n\t\"testing\"\n)\n", "import (\n\tassert \"github.com/stretchr/testify/assert\"\n)\n", "import \"testing/fstest\"\n"},
		policy.LangPython: {"import unittest\n", "from pytest import raises\n", "  import pytest\n"},
		policy.LangJS:     {"const test = require(\"node:test\");\n", "import { expect } from 'chai';\n", "import { vi } from \"vitest\";\n"},
		policy.LangRuby:   {"require \"minitest/autorun\"\n", "require 'rspec'\n"},
		policy.LangShell:  {"assert_eq() { [ \"$1\" = \"$2\" ]; }\n", "function expect_output {\n", "  refute() {\n"},
	}
	code := map[string][]string{
		policy.LangGo:     {"package greeter\n\n// testing is done elsewhere\nimport \"fmt\"\n", "var s = \"testing\"\n"},
		policy.LangPython: {"import os\n# uses unittest elsewhere\n", "from myunittest import x\n"},
		policy.LangJS:     {"const assert = require(\"assert\");\n", "const x = require('./test');\n"},
		policy.LangRuby:   {"require 'json'\n"},
		policy.LangShell:  {"fail() { echo \"$*\"; exit 1; }\n", "check_deps() {\n", "echo assert_eq\n"},
	}
	for lang, texts := range helpers {
		for _, s := range texts {
			assert.True(t, testHelper[lang].MatchString(s), "%s: %q is a test helper", lang, s)
		}
	}
	for lang, texts := range code {
		for _, s := range texts {
			assert.False(t, testHelper[lang].MatchString(s), "%s: %q is code", lang, s)
		}
	}
}

// TestGoBuildsTestFilesByName: go test builds every *_test.go of a package except names it
// ignores (_x, .x) and names that carry a GOOS or GOARCH suffix.
func TestGoBuildsTestFilesByName(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"greet_test.go", "greet_unix_test.go", "a_b_test.go", "linux_test.go"} {
		assert.True(t, goBuildsTestFile(n), n)
	}
	for _, n := range []string{"_greet_test.go", ".greet_test.go", "greet_windows_test.go", "greet_arm64_test.go", "greet_linux_amd64_test.go", "greet.go", "_test.go", "greet_test.go.bak"} {
		assert.False(t, goBuildsTestFile(n), n)
	}
}
