package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestManFlagWritesManPages: -man DIR writes the man pages (geas.1, geas-gate.1, ...) and no
// Markdown; DIR alone writes the Markdown reference and no man pages.
func TestManFlagWritesManPages(t *testing.T) {
	man := filepath.Join(t.TempDir(), "share", "man", "man1")
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run([]string{"-man", man}, &out, &errb), errb.String())
	assert.Equal(t, "wrote the man pages to "+man+"\n", out.String())
	for _, page := range []string{"geas.1", "geas-gate.1", "geas-gate-verify.1", "geas-task-history-reset.1"} {
		assert.FileExists(t, filepath.Join(man, page))
	}
	gate, err := os.ReadFile(filepath.Join(man, "geas-gate.1"))
	require.NoError(t, err)
	assert.Contains(t, string(gate), ".EX\npass   every blocking check passed ",
		"the verdict table of geas gate --help stays a table, one row a line, in the man page")
	assert.Contains(t, string(gate), "\nfail   the work does not meet the contract ")
	md, _ := filepath.Glob(filepath.Join(man, "*.md"))
	assert.Empty(t, md)

	ref := t.TempDir()
	out.Reset()
	require.Equal(t, exitOK, run([]string{ref}, &out, &errb), errb.String())
	assert.FileExists(t, filepath.Join(ref, "geas_gate.md"))
	pages, _ := filepath.Glob(filepath.Join(ref, "*.1"))
	assert.Empty(t, pages)
}

// TestUsageMistakesWriteNothing: an unknown flag, -man without a directory, or a directory given
// twice is a usage error (exit 64) that writes nothing.
func TestUsageMistakesWriteNothing(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range [][]string{{"-mann", "x"}, {"-man"}, {"-man", "x", "y"}, {"x", "y"}} {
		var out, errb bytes.Buffer
		assert.Equal(t, exitUsage, run(args, &out, &errb), "%q", args)
		assert.True(t, strings.Contains(errb.String(), "usage: go run ./cmd/geasdocs"), "%q: %s", args, errb.String())
		assert.Empty(t, out.String())
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestUnwritableDirIsAnError: a directory that cannot be created is exit 1 with the reason.
func TestUnwritableDirIsAnError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	var out, errb bytes.Buffer
	assert.Equal(t, exitError, run([]string{"-man", filepath.Join(file, "man1")}, &out, &errb))
	assert.Contains(t, errb.String(), "geasdocs: create ")
}
