package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "update golden files and testscript cmp targets")

// TestMain registers geas so that scripts (and tests that exec "geas" from PATH) run the real CLI.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"geas": func() {
			installTestHook()
			os.Exit(Main())
		},
	})
}

// TestScripts runs every testdata/script/*.txtar end to end.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "testdata", "script"),
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mkproject": cmdMkproject,
			"jsonq":     cmdJSONQ,
			"status":    cmdStatus,
			"setjson":   cmdSetJSON,
			"rechain":   cmdRechain,
			// forged objects and commit-graphs (forge_script_test.go)
			"forgeloose": cmdForgeLoose,
			"forgepack":  cmdForgePack,
			"forgegraph": cmdForgeGraph,
		},
		Condition: scriptCondition,
		Setup: func(env *testscript.Env) error {
			env.Setenv("GEAS_EXAMPLE", exampleDir(t))
			// geas v1.4.0's own examples adapted into a mission (testdata/geas-v1.4/mission).
			env.Setenv("GEAS_V14_MISSION", filepath.Join(filepath.Dir(exampleDir(t)), "geas-v1.4", "mission"))
			// git works in scripts without any user configuration.
			env.Setenv("HOME", env.WorkDir)
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("GIT_AUTHOR_NAME", "geas test")
			env.Setenv("GIT_AUTHOR_EMAIL", "test@geas.invalid")
			env.Setenv("GIT_COMMITTER_NAME", "geas test")
			env.Setenv("GIT_COMMITTER_EMAIL", "test@geas.invalid")
			env.Setenv("GIT_AUTHOR_DATE", "2026-11-01T09:00:00Z")
			env.Setenv("GIT_COMMITTER_DATE", "2026-11-01T09:00:00Z")
			// Scripts that run real test suites (go test -json in a module without dependencies)
			// share the build cache, use the installed toolchain and never reach the network.
			env.Setenv("GOCACHE", goCache())
			env.Setenv("GOTOOLCHAIN", "local")
			env.Setenv("GOPROXY", "off")
			env.Setenv("GOFLAGS", "-mod=mod")
			// Tools write their configuration (the go command its telemetry counters) under
			// XDG_CONFIG_HOME, which would otherwise be inside the project, a change of its
			// working tree.
			cfg, err := os.MkdirTemp("", "geas-script-config-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(cfg) })
			env.Setenv("XDG_CONFIG_HOME", cfg)
			env.Setenv("GOTELEMETRY", "off")
			env.Setenv("npm_config_cache", t.TempDir()) // npm's cache and logs, outside the project
			env.Setenv("npm_config_update_notifier", "false")
			return nil
		},
	})
}

// scriptCondition answers the conditions of the scripts beyond testscript's own: [root] (the
// test runs as uid 0, as CI does) and [user:NAME] (the system knows a user NAME).
func scriptCondition(cond string) (bool, error) {
	switch name, arg, _ := strings.Cut(cond, ":"); name {
	case "root":
		return os.Geteuid() == 0, nil
	case "user":
		_, err := user.Lookup(arg)
		return err == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// goCache is the go command's build cache as it is outside the scripts (whose HOME differs).
func goCache() string {
	if c := os.Getenv("GOCACHE"); c != "" {
		return c
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "geas-script-gocache")
	}
	return filepath.Join(dir, "go-build")
}

func exampleDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// cmdMkproject copies the shipped example project (testdata/example) to DIR (default: .).
// With -git it also writes the greeter sources the example task describes and commits everything
// to a new git repository on branch main, so the example task passes the gate.
func cmdMkproject(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! mkproject")
	}
	withGit := len(args) > 0 && args[0] == "-git"
	if withGit {
		args = args[1:]
	}
	dst := "."
	if len(args) > 0 {
		dst = args[0]
	}
	defer func() {
		if !withGit {
			return
		}
		var env []string
		for _, kv := range []string{"HOME", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"} {
			env = append(env, kv+"="+ts.Getenv(kv))
		}
		ts.Check(commitGreeter(ts.MkAbs(dst), env))
	}()
	ts.Check(copyTree(ts.Getenv("GEAS_EXAMPLE"), ts.MkAbs(dst)))
}

// copyTree copies the files below src to dst; symlinks are copied as links.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, target)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// commitGreeter commits the project as it is (the base: the orchestration files) to a new git
// repository on branch main, then writes the greeter sources the example task t1 describes,
// pins t1's base_snapshot to the base commit and commits that (the change), so that the task is
// one real commit on top of its base and the working tree is that commit (SPEC §5.1); env adds the
// git identity (and dates).
func commitGreeter(dir string, env []string) error {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out)), nil
	}
	for _, a := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "base"}} {
		if _, err := git(a...); err != nil {
			return err
		}
	}
	base, err := git("rev-parse", "HEAD")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "greeter"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "greeter", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# greeter\n\nRun with --verbose to print the configuration.\n"), 0o644); err != nil {
		return err
	}
	contract := filepath.Join(dir, ".geas", "missions", "m1", "tasks", "t1", "contract.json")
	b, err := os.ReadFile(contract)
	if err != nil {
		return err
	}
	pinned := bytes.Replace(b, []byte(`"base_snapshot": "HEAD"`), []byte(`"base_snapshot": "`+base+`"`), 1)
	if bytes.Equal(pinned, b) {
		return errors.New("the example contract of t1 no longer has base_snapshot HEAD to pin")
	}
	if err := os.WriteFile(contract, pinned, 0o644); err != nil {
		return err
	}
	for _, a := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "greeter"}} {
		if _, err := git(a...); err != nil {
			return err
		}
	}
	// The scripts keep scratch copies (stdout, a record before a run) beside the project; they are
	// ignored, as a user's build outputs are, so that they are not a change of the working tree.
	return os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte(scratchExclude), 0o644)
}

// scratchExclude is .git/info/exclude of a test project: the scripts' scratch file names.
const scratchExclude = `/out*.json
/v.json
/rate.json
/printed
/*.before
/*.prev
/*.once
/*.signed
/*.hash
/*.sha256
/summary.md
/out*.txt
/seen.*
/res.json
/*.after-*
/*.orig
/pin.txt
/outside/
/*.json
/open.txt
/precious.txt
/*.quoted
/*.whole
`

// cmdJSONQ prints the JSON value at a JSON pointer of FILE (or of the last stdout when FILE is
// "stdout") compactly on stdout, so scripts can match it: jsonq FILE /a/0/b. A FILE ending in
// .jsonl is the array of its lines.
func cmdJSONQ(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonq FILE POINTER")
	}
	var data []byte
	if args[0] == "stdout" {
		data = []byte(ts.ReadFile("stdout"))
	} else {
		data = []byte(ts.ReadFile(args[0]))
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if strings.HasSuffix(args[0], ".jsonl") {
		// A JSON-lines file (gate-history.jsonl) reads as the array of its lines.
		var lines []any
		for dec.More() {
			var line any
			ts.Check(dec.Decode(&line))
			lines = append(lines, line)
		}
		v = lines
	} else {
		ts.Check(dec.Decode(&v))
	}
	for _, tok := range strings.Split(strings.TrimPrefix(args[1], "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				if neg {
					return
				}
				ts.Fatalf("jsonq: no key %q", tok)
			}
		case []any:
			var i int
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(x) {
				if neg {
					return
				}
				ts.Fatalf("jsonq: no index %q", tok)
			}
			v = x[i]
		default:
			if neg {
				return
			}
			ts.Fatalf("jsonq: cannot index %T with %q", v, tok)
		}
	}
	if neg {
		ts.Fatalf("jsonq: %s exists", args[1])
	}
	b, err := json.Marshal(v)
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "%s\n", b)
}

// cmdStatus runs PROGRAM and checks its exit code: status 64 geas task show --task ../x
// Its stdout and stderr are kept for the stdout and stderr commands, as with exec.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("run %s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdSetJSON edits a JSON file in place: setjson FILE POINTER VALUE sets the value at POINTER to
// VALUE (JSON); setjson -d FILE POINTER deletes it. Parent objects must exist; "-" appends to an
// array. Keys keep their order.
func cmdSetJSON(ts *testscript.TestScript, neg bool, args []string) {
	del := len(args) > 0 && args[0] == "-d"
	if del {
		args = args[1:]
	}
	if neg || (del && len(args) != 2) || (!del && len(args) != 3) {
		ts.Fatalf("usage: setjson FILE POINTER VALUE | setjson -d FILE POINTER")
	}
	var doc any
	jsonl := strings.HasSuffix(args[0], ".jsonl")
	if jsonl {
		// A JSON-lines file (gate-history.jsonl) is edited as the array of its lines.
		var lines []any
		dec := json.NewDecoder(strings.NewReader(ts.ReadFile(args[0])))
		for dec.More() {
			var line any
			ts.Check(dec.Decode(&line))
			lines = append(lines, line)
		}
		doc = lines
	} else {
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc))
	}
	var val any
	if !del {
		if err := json.Unmarshal([]byte(args[2]), &val); err != nil {
			ts.Fatalf("setjson: value %q is not JSON: %v", args[2], err)
		}
	}
	toks := strings.Split(strings.TrimPrefix(args[1], "/"), "/")
	var set func(cur any, toks []string) any
	set = func(cur any, toks []string) any {
		tok := strings.ReplaceAll(strings.ReplaceAll(toks[0], "~1", "/"), "~0", "~")
		last := len(toks) == 1
		switch x := cur.(type) {
		case map[string]any:
			if last {
				if del {
					delete(x, tok)
				} else {
					x[tok] = val
				}
				return x
			}
			child, ok := x[tok]
			if !ok {
				ts.Fatalf("setjson: no key %q", tok)
			}
			x[tok] = set(child, toks[1:])
			return x
		case []any:
			if tok == "-" && last && !del {
				return append(x, val)
			}
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				ts.Fatalf("setjson: no index %q", tok)
			}
			if last {
				if del {
					return append(x[:i], x[i+1:]...)
				}
				x[i] = val
				return x
			}
			x[i] = set(x[i], toks[1:])
			return x
		}
		ts.Fatalf("setjson: cannot index %T with %q", cur, tok)
		return nil
	}
	doc = set(doc, toks)
	if jsonl {
		var b []byte
		for _, line := range doc.([]any) {
			l, err := json.Marshal(line)
			ts.Check(err)
			b = append(append(b, l...), '\n')
		}
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o644))
		return
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), append(b, '\n'), 0o644))
}
