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
		"geas": func() { os.Exit(Main()) },
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
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("GEAS_EXAMPLE", exampleDir(t))
			return nil
		},
	})
}

func exampleDir(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "example"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// cmdMkproject copies the shipped example project (testdata/example) to DIR (default: .).
func cmdMkproject(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! mkproject")
	}
	dst := "."
	if len(args) > 0 {
		dst = args[0]
	}
	dst = ts.MkAbs(dst)
	src := ts.Getenv("GEAS_EXAMPLE")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	ts.Check(err)
}

// cmdJSONQ prints the JSON value at a JSON pointer of FILE (or of the last stdout when FILE is
// "stdout") compactly on stdout, so scripts can match it: jsonq FILE /a/0/b
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
	ts.Check(dec.Decode(&v))
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
