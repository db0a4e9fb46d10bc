package tiers

import (
	"regexp"

	"github.com/geas-dev/geas/policy"
)

// Which files the test-integrity checks (SPEC §5.2a) treat as more than code beyond the policy's
// protected table: runner configuration, test helpers known by their content, and the languages
// whose skip markers count in every file. Unlike the protected table and the markers, no policy
// replaces them.

// runnerConfig are the test-runner configuration paths that are protected as paths: adding one the
// base does not have changes how the tests run (a conftest.py that monkeypatches, a jest.config
// that narrows testMatch), so it is a change to a protected check too.
var runnerConfig = []string{
	"**/conftest.py", "**/pytest.ini", "**/tox.ini", "**/jest.config.*", "**/vitest.config.*",
	"**/.mocharc*", "**/karma.conf.*", "**/phpunit.xml*", "**/.nycrc*", "**/codecov.yml",
	// pytest reads .pytest.ini before pyproject.toml; npm and yarn read their rc files for every
	// script they run (script-shell=true makes `npm test` run nothing, node-options a preload).
	"**/.pytest.ini", "**/.npmrc", "**/.yarnrc", "**/.yarnrc.yml",
	// go.work decides which module a test's imports resolve to, like go.mod's replace.
	"**/go.work",
}

// testHelper are, per language, what makes a file of the base a test helper wherever it lives: it
// imports the language's test framework (Go's testing or testify, Python's unittest or pytest, a
// JavaScript test runner or assertion library, minitest or RSpec), or, in shell, defines an
// assert, expect or refute function. Code under test rarely does; a helper that a test calls to
// check (checks.Equal(t, got, want), assert_eq "$got" "$want") is the test's assertion, and
// emptying it is the same cheat as emptying the test.
var testHelper = map[string]*regexp.Regexp{
	policy.LangGo:     regexp.MustCompile(`(?m)^\s*(?:import\s+)?(?:[\w.]+\s+)?"(?:testing|testing/\w+|github\.com/stretchr/testify/\w+)"`),
	policy.LangPython: regexp.MustCompile(`(?m)^\s*(?:import|from)\s+(?:unittest|pytest)\b`),
	policy.LangJS:     regexp.MustCompile(`(?:require\(\s*|from\s+|import\s+)["'](?:node:test|chai|vitest|@jest/globals|mocha|tap|uvu)["'/]`),
	policy.LangRuby:   regexp.MustCompile(`(?m)^\s*require\s*\(?\s*["'](?:minitest|rspec|test/unit)`),
	policy.LangShell:  regexp.MustCompile(`(?m)^\s*(?:function\s+)?(?:assert|expect|refute)\w*\s*(?:\(\s*\)|\{)`),
}

// skipEverywhere are the languages whose skip markers count in every file, not only test files:
// Rust's unit tests live beside the code (#[cfg(test)] in src/), and a pytest configuration is
// whatever file pytest reads it from.
var skipEverywhere = map[string]bool{policy.LangRust: true, policy.LangPytestConfig: true}
