package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileInput runs every case of testdata/hostile/ against the real CLI (SPEC §2.4, §3): a
// truncated, malformed, huge, deep, looping or escaping input ends in error or block (or a usage
// or refusal exit for command-line input) with a message that names the file and field; never
// pass, never a panic, within the case's time and memory bounds. The one exception is the
// control case, which shows the untouched project passes, so every other verdict is the
// hostile input's doing.
//
// A case is a txtar archive. Its files are planted in a copy of the example project ($T in a
// name is the task directory .geas/missions/m1/tasks/t1); its comment holds one directive a line:
//
//	contract JSON            merge JSON's top-level keys into t1's contract (null deletes a key)
//	record JSON              merge JSON's top-level keys into t1's record.json
//	raw FILE GO-STRING       write FILE with the bytes of a Go-quoted string (NUL, invalid UTF-8)
//	append FILE GO-STRING    append the bytes of a Go-quoted string to FILE
//	repeat FILE N GO-STRING  write FILE as N copies of a Go-quoted string
//	symlink LINK TARGET      create LINK pointing at TARGET ($DIR is the project root)
//	sparse FILE SIZE         create FILE as a sparse file of SIZE bytes (suffixes K, M)
//	deep FILE N              write evidence FILE whose summary is N nested arrays
//	mkfifo FILE              create a named pipe
//	rm FILE                  remove FILE
//	run ARGS...              the geas command line (default: gate --task t1); -C and --format json are added
//	timeout DURATION         the case's time bound (default 60s)
//	maxrss MB                the case's memory bound, peak RSS of the geas process (default 150); not
//	                         checked under -race, whose memory says nothing about geas: bench/rss.sh
//	                         checks the cases with a maxrss line on a normal build
//	expect VERDICT|-  EXIT   the verdict in the JSON output (- for none) and the exit code
//	match REGEXP             stdout+stderr must match (several allowed)
//	maxdisk DIR MB           after the run the files under DIR total at most MB
//	knownbug TEXT            a reported bug outside this package's reach: a mismatch skips the case
//	                         (panics, passes and the time and memory bounds still fail it)
//	nomatch REGEXP           stdout+stderr must not match
//	ignore PATTERN           append PATTERN to .git/info/exclude (a planted file that is ignored
//	                         is no change of the working tree, SPEC §5.1)
//	git ARGS...              run git in the project (after the lines above it), e.g. to commit
func TestHostileInput(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "hostile", "*.txtar"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 50, "the hostile corpus has at least 50 cases")
	if testing.Short() {
		t.Skip("hostile corpus skipped in -short mode")
	}
	base := hostileBase(t)
	// Two cases at a time: the machine has two cores, and some cases are busy on purpose.
	sem := make(chan struct{}, 2)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			runHostileCase(t, base, f)
		})
	}
}

// hostileBase is the example project in a git repository with a cheap passing eval command.
func hostileBase(t *testing.T) string {
	dir := gitProject(t)
	editContract(t, dir, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	return dir
}

type hostileCase struct {
	args     []string
	timeout  time.Duration
	maxRSSMB int64
	verdict  string
	exit     int
	knownBug string
	maxDisk  map[string]int64 // directory → MB
	match    []*regexp.Regexp
	nomatch  []*regexp.Regexp
}

func runHostileCase(t *testing.T, base, file string) {
	ar, err := txtar.ParseFile(file)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, copyTree(base, dir))
	const task = ".geas/missions/m1/tasks/t1"
	expand := func(s string) string {
		return strings.NewReplacer("$T", task, "$DIR", dir).Replace(s)
	}
	for _, f := range ar.Files {
		p := filepath.Join(dir, expand(f.Name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, f.Data, 0o644))
	}
	hc := hostileCase{args: []string{"gate", "--task", "t1", "--quiet"}, timeout: 60 * time.Second, maxRSSMB: 150, exit: -1}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		args := strings.Fields(rest)
		switch verb {
		case "contract":
			mergeJSON(t, filepath.Join(dir, task, "contract.json"), expand(rest))
		case "record":
			mergeJSON(t, filepath.Join(dir, task, "record.json"), expand(rest))
		case "raw":
			name, quoted, _ := strings.Cut(rest, " ")
			b, err := strconv.Unquote(strings.TrimSpace(quoted))
			require.NoError(t, err, "raw %s", name)
			p := filepath.Join(dir, expand(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(b), 0o644))
		case "append":
			name, quoted, _ := strings.Cut(rest, " ")
			b, err := strconv.Unquote(strings.TrimSpace(quoted))
			require.NoError(t, err, "append %s", name)
			f, err := os.OpenFile(filepath.Join(dir, expand(name)), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString(b)
			require.NoError(t, err)
			require.NoError(t, f.Close())
		case "repeat":
			n, err := strconv.Atoi(args[1])
			require.NoError(t, err)
			b, err := strconv.Unquote(args[2])
			require.NoError(t, err)
			writeRepeated(t, filepath.Join(dir, expand(args[0])), n, b)
		case "symlink":
			p := filepath.Join(dir, expand(args[0]))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			_ = os.Remove(p)
			require.NoError(t, os.Symlink(expand(args[1]), p))
		case "sparse":
			f, err := os.Create(filepath.Join(dir, expand(args[0])))
			require.NoError(t, err)
			require.NoError(t, f.Truncate(parseSize(t, args[1])))
			require.NoError(t, f.Close())
		case "deep":
			n, err := strconv.Atoi(args[1])
			require.NoError(t, err)
			doc := `{"version":"1.0","agent":"challenger","task_id":"t1","role":"reviewer","concerns":[],"summary":` +
				strings.Repeat("[", n) + strings.Repeat("]", n) + `}`
			require.NoError(t, os.WriteFile(filepath.Join(dir, expand(args[0])), []byte(doc), 0o644))
		case "mkfifo":
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, expand(args[0])), 0o644))
		case "rm":
			require.NoError(t, os.RemoveAll(filepath.Join(dir, expand(args[0]))))
		case "ignore":
			f, err := os.OpenFile(filepath.Join(dir, ".git", "info", "exclude"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			require.NoError(t, err)
			_, err = f.WriteString(expand(rest) + "\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
		case "git":
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@geas.invalid",
				"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@geas.invalid")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "git %v: %s", args, out)
		case "run":
			hc.args = nil
			for _, a := range args {
				hc.args = append(hc.args, expand(a))
			}
		case "timeout":
			hc.timeout, err = time.ParseDuration(args[0])
			require.NoError(t, err)
		case "maxrss":
			hc.maxRSSMB, err = strconv.ParseInt(args[0], 10, 64)
			require.NoError(t, err)
		case "expect":
			require.Len(t, args, 2, "expect VERDICT EXIT")
			hc.verdict = args[0]
			hc.exit, err = strconv.Atoi(args[1])
			require.NoError(t, err)
		case "maxdisk":
			mb, err := strconv.ParseInt(args[1], 10, 64)
			require.NoError(t, err)
			if hc.maxDisk == nil {
				hc.maxDisk = map[string]int64{}
			}
			hc.maxDisk[filepath.Join(dir, expand(args[0]))] = mb
		case "knownbug":
			hc.knownBug = rest
		case "match":
			hc.match = append(hc.match, regexp.MustCompile(rest))
		case "nomatch":
			hc.nomatch = append(hc.nomatch, regexp.MustCompile(rest))
		default:
			t.Fatalf("unknown directive %q", line)
		}
	}
	require.NotEqual(t, -1, hc.exit, "the case has no expect line")
	if hc.verdict == "pass" {
		require.Equal(t, "control", filepath.Base(strings.TrimSuffix(file, ".txtar")), "only the control case may expect pass")
	}

	ctx, cancel := context.WithTimeout(t.Context(), hc.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "geas", append([]string{"-C", dir, "--format", "json"}, hc.args...)...)
	cmd.Dir = dir
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	elapsed := time.Since(start)
	out := stdout.String() + "\n" + stderr.String()
	require.NoError(t, ctx.Err(), "the case did not finish within %v; output:\n%s", hc.timeout, out)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	assert.NotRegexp(t, `panic:|goroutine \d+ \[`, out, "geas panicked")
	rss := int64(0)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss / 1024 // kilobytes on Linux
	}
	if raceEnabled {
		// The race detector multiplies memory (285 MB and 208 MB measured for cases
		// bound at 150 and 100): the bound is about geas, so bench/rss.sh checks it on a normal build.
		t.Logf("peak RSS %d MB not checked against %d MB: built with -race (see bench/rss.sh)", rss, hc.maxRSSMB)
	} else {
		assert.LessOrEqual(t, rss, hc.maxRSSMB, "peak RSS %d MB over the case's bound", rss)
	}
	t.Logf("exit %d, %v, peak RSS %d MB", code, elapsed.Round(time.Millisecond), rss)

	verdict := "-"
	var res struct {
		Verdict string `json:"verdict"`
		Causes  []struct {
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"causes"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(stdout.Bytes(), &res) == nil && res.Verdict != "" {
		verdict = res.Verdict
	}
	for _, c := range res.Causes {
		t.Logf("cause %s: %.200s", c.Code, c.Detail)
	}
	if res.Error.Message != "" {
		t.Logf("error: %.200s", res.Error.Message)
	} else if stderr.Len() > 0 {
		t.Logf("stderr: %.200s", stderr.String())
	}
	if verdict == "pass" && hc.verdict != "pass" {
		t.Errorf("a hostile input passed; output:\n%s", truncateOut(out))
	}
	var problems []string
	if verdict != hc.verdict {
		problems = append(problems, fmt.Sprintf("verdict %s, want %s", verdict, hc.verdict))
	}
	if code != hc.exit {
		problems = append(problems, fmt.Sprintf("exit %d, want %d", code, hc.exit))
	}
	for _, re := range hc.match {
		if !re.MatchString(out) {
			problems = append(problems, fmt.Sprintf("output does not match /%s/", re))
		}
	}
	for d, mb := range hc.maxDisk {
		if size := diskUsage(t, d); size > mb<<20 {
			problems = append(problems, fmt.Sprintf("%s holds %d MB, over %d MB", d, size>>20, mb))
		}
	}
	for _, re := range hc.nomatch {
		if re.MatchString(out) {
			problems = append(problems, fmt.Sprintf("output matches /%s/", re))
		}
	}
	switch {
	case len(problems) == 0:
		if hc.knownBug != "" {
			t.Errorf("known bug %q is fixed: drop the knownbug line", hc.knownBug)
		}
	case hc.knownBug != "":
		t.Skipf("known bug, reported: %s (%s)", hc.knownBug, strings.Join(problems, "; "))
	default:
		t.Errorf("%s; output:\n%s", strings.Join(problems, "; "), truncateOut(out))
	}
}

// writeRepeated writes n copies of s to file through a small buffer: the test process must stay
// small, for a child's peak RSS on Linux starts at the parent's (vfork and exec carry it over).
func writeRepeated(t *testing.T, file string, n int, s string) {
	f, err := os.Create(file)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	for range n {
		_, err = w.WriteString(s)
		require.NoError(t, err)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}

// diskUsage is the total size of the regular files under dir.
func diskUsage(t *testing.T, dir string) int64 {
	var n int64
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	}))
	return n
}

// capped keeps the first 4 MiB written to it: a case that prints forever must not fill memory.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := 4<<20 - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func truncateOut(s string) string {
	if len(s) > 8000 {
		return s[:8000] + "…"
	}
	return s
}

func parseSize(t *testing.T, s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return n * mult
}

// mergeJSON sets the top-level keys of patch in the JSON object stored at p; a null deletes one.
func mergeJSON(t *testing.T, p, patch string) {
	var doc, add map[string]json.RawMessage
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	require.NoError(t, json.Unmarshal([]byte(patch), &add), "patch %s", patch)
	for k, v := range add {
		if string(v) == "null" {
			delete(doc, k)
			continue
		}
		doc[k] = v
	}
	b, err = json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, b, 0o644))
}
