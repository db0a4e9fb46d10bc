package testresults

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const oneFailing = `<testsuite name="s"><testcase classname="C" name="ok"/><testcase classname="C" name="bad"><failure/></testcase></testsuite>`

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
}

func readDir(t *testing.T, dir, glob string, since time.Time) (*Summary, error) {
	t.Helper()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	return ReadJUnit(root, glob, nil, since, time.Now())
}

func TestJUnitFilesAreReadThroughTheGlob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	write(t, dir, "reports/a.xml", oneFailing)
	write(t, dir, "reports/sub/b.xml", `<testsuites><testsuite><testcase name="x"/></testsuite></testsuites>`)
	write(t, dir, "reports/notes.txt", "not junit")
	write(t, dir, ".git/reports/c.xml", oneFailing)
	s, err := readDir(t, dir, "reports/**/*.xml", start)
	require.NoError(t, err)
	assert.Equal(t, []string{"reports/a.xml", "reports/sub/b.xml"}, s.Sources)
	assert.Equal(t, 2, s.Passed)
	assert.Equal(t, 1, s.Failed)
	assert.Equal(t, []string{"C.bad"}, s.Failing)
}

func TestJUnitReadRefusesWhatTheCommandDidNotWrite(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	write(t, outside, "junit.xml", `<testsuite><testcase name="forged"/></testsuite>`)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		err   string
	}{
		{"missing", func(t *testing.T, dir string) {}, "no results file"},
		{"missing directory", func(t *testing.T, dir string) { write(t, dir, "other/x.xml", oneFailing) }, "no results file"},
		{"stale", func(t *testing.T, dir string) {
			write(t, dir, "reports/junit.xml", `<testsuite><testcase name="x"/></testsuite>`)
			old := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(filepath.Join(dir, "reports/junit.xml"), old, old))
		}, "stale"},
		{"from the future", func(t *testing.T, dir string) {
			write(t, dir, "reports/junit.xml", `<testsuite><testcase name="x"/></testsuite>`)
			later := time.Now().Add(time.Hour)
			require.NoError(t, os.Chtimes(filepath.Join(dir, "reports/junit.xml"), later, later))
		}, "after the command ended"},
		{"symlink out", func(t *testing.T, dir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "reports"), 0o755))
			require.NoError(t, os.Symlink(filepath.Join(outside, "junit.xml"), filepath.Join(dir, "reports/junit.xml")))
		}, "not a regular file"},
		{"symlinked directory", func(t *testing.T, dir string) {
			require.NoError(t, os.Symlink(outside, filepath.Join(dir, "reports")))
		}, ""},
		{"fifo", func(t *testing.T, dir string) {
			if runtime.GOOS == "windows" {
				t.Skip("no FIFOs")
			}
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "reports"), 0o755))
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "reports/junit.xml"), 0o644))
		}, "not a regular file"},
		{"not xml", func(t *testing.T, dir string) { write(t, dir, "reports/junit.xml", "ok 1 - x\n") }, "no <testsuites>"},
		{"too many", func(t *testing.T, dir string) {
			for i := range MaxJUnitFiles + 1 {
				write(t, dir, "reports/"+strconv.Itoa(i)+".xml", oneFailing)
			}
		}, "more than 256 files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			start := time.Now()
			tc.setup(t, dir)
			s, err := readDir(t, dir, "reports/*.xml", start)
			require.Error(t, err)
			if tc.err != "" {
				assert.Contains(t, err.Error(), tc.err)
			}
			assert.Equal(t, 0, s.Passed, "nothing the gate refused is counted")
			if tc.name == "missing" {
				assert.True(t, errors.Is(err, ErrNoResults))
			}
		})
	}
}

func TestJUnitFileSizeIsBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "r"), 0o755))
	f, err := os.Create(filepath.Join(dir, "r/big.xml"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxJUnitFileBytes+1)) // sparse: no disk spent
	require.NoError(t, f.Close())
	_, err = readDir(t, dir, "r/*.xml", start)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "over the limit")
}

// TestAJUnitReportFoundBeforeTheRunIsStaleWhateverItsDate: a report planted just before the run
// (inside the times' slack) is the same file afterwards, so it is not read; the honest control is
// the same file rewritten by the command.
func TestAJUnitReportFoundBeforeTheRunIsStaleWhateverItsDate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "reports/junit.xml", `<testsuite><testcase name="forged"/></testsuite>`)
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	start := time.Now()
	before := JUnitBefore(root, "reports/*.xml")
	require.Len(t, before, 1)
	_, err = ReadJUnit(root, "reports/*.xml", before, start, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stale: it was there before the command ran")

	time.Sleep(10 * time.Millisecond) // a new modification time even on a coarse clock tick
	write(t, dir, "reports/junit.xml", `<testsuite><testcase name="real"/><testcase name="also"/></testsuite>`)
	s, err := ReadJUnit(root, "reports/*.xml", before, start, time.Now())
	require.NoError(t, err)
	assert.Equal(t, 2, s.Passed)
}
