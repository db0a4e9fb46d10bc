//go:build unix

package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A repository the agents can write holds whatever they put there: a named pipe where the gate
// opens a file makes open(2) wait for a writer for ever (SPEC §2 invariant 9). These tests plant
// one at every path the gate reads, in turn, and require the gate to answer within a deadline;
// where the gate needs the file, the answer must not be a pass and must name the file.

// specialFileDeadline is how long one gate run may take before it counts as hung: the honest runs
// take well under a second.
const specialFileDeadline = 60 * time.Second

// fifoFixture builds a project in a fresh directory and returns the directory the gate runs in
// and the git directories of its repository (the git dir, which holds HEAD and the index, and the
// common dir, which holds the objects, refs and config; the same for a plain repository).
type fifoFixture func(t *testing.T) (dir, gitDir, commonDir string)

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@geas.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@geas.invalid")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// looseFixture: the example project, every object loose, refs loose.
func looseFixture(t *testing.T) (string, string, string) {
	dir := hostileBase(t)
	return dir, filepath.Join(dir, ".git"), filepath.Join(dir, ".git")
}

// packedFixture: packed objects, packed-refs and a commit-graph (git gc).
func packedFixture(t *testing.T) (string, string, string) {
	dir, g, c := looseFixture(t)
	gitIn(t, dir, "-c", "gc.writeCommitGraph=true", "gc", "-q")
	gitIn(t, dir, "commit-graph", "write", "--reachable")
	return dir, g, c
}

// splitGraphFixture: a commit-graph chain under objects/info/commit-graphs.
func splitGraphFixture(t *testing.T) (string, string, string) {
	dir, g, c := packedFixture(t)
	require.NoError(t, os.Remove(filepath.Join(c, "objects", "info", "commit-graph")))
	gitIn(t, dir, "commit-graph", "write", "--reachable", "--split")
	return dir, g, c
}

// gitFileFixture: .git is a file, "gitdir: " naming the repository elsewhere.
func gitFileFixture(t *testing.T) (string, string, string) {
	dir, g, _ := looseFixture(t)
	sep := filepath.Join(t.TempDir(), "separate.git")
	require.NoError(t, os.Rename(g, sep))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+sep+"\n"), 0o644))
	return dir, sep, sep
}

// linkedFixture: the gate runs in a linked worktree (git worktree add), whose .git file names
// .git/worktrees/linked, whose commondir names the main .git.
func linkedFixture(t *testing.T) (string, string, string) {
	main, g, _ := looseFixture(t)
	linked := filepath.Join(t.TempDir(), "linked")
	gitIn(t, main, "worktree", "add", "-q", linked)
	editContract(t, linked, func(c map[string]any) { c["eval_commands"] = []any{"true"} })
	require.NoError(t, os.WriteFile(filepath.Join(g, "info", "exclude"), []byte(scratchExclude), 0o644))
	return linked, filepath.Join(g, "worktrees", "linked"), g
}

// fifoCase plants a named pipe at one path. at names it: "$DIR/…" in the project, "$GIT/…" in the
// git dir, "$COMMON/…" in the common dir; a glob picks the first match. needed: the gate reads the
// path in this fixture, so the answer must not be a pass and must name the file (name, default
// the base name of the path).
type fifoCase struct {
	fixture string
	at      string
	needed  bool
	name    string
	kind    string // what is planted: "" a named pipe, "socket" a unix socket, "zero" a link to /dev/zero, "huge" a sparse 8 GiB file
}

var fifoFixtures = map[string]fifoFixture{
	"loose": looseFixture, "packed": packedFixture, "split": splitGraphFixture, "gitfile": gitFileFixture, "linked": linkedFixture,
}

var fifoCases = []fifoCase{
	// The git directory, read by every run.
	{fixture: "loose", at: "$DIR/.git", needed: true},
	{fixture: "loose", at: "$GIT/HEAD", needed: true},
	{fixture: "loose", at: "$GIT/config", needed: true},
	{fixture: "loose", at: "$GIT/index", needed: true},
	{fixture: "loose", at: "$GIT/info/exclude", needed: true},
	{fixture: "loose", at: "$GIT/shallow", needed: true},
	{fixture: "loose", at: "$GIT/refs/heads/main", needed: true},
	// A refs directory that is not one holds no refs: HEAD's branch is unknown, as in git.
	{fixture: "loose", at: "$GIT/refs/heads", needed: true, name: `revision "HEAD"`},
	{fixture: "loose", at: "$GIT/objects/$HEAD", needed: true, name: "$HEADFILE"},
	{fixture: "loose", at: "$GIT/objects/$HEADDIR", needed: true, name: "$HEADDIR"},
	// Read only when the refs or objects are not found elsewhere: an answer, whatever it is.
	{fixture: "loose", at: "$GIT/packed-refs"},
	{fixture: "loose", at: "$GIT/objects/info/alternates"},
	{fixture: "loose", at: "$GIT/objects/info/grafts"},
	{fixture: "loose", at: "$GIT/FETCH_HEAD"},
	{fixture: "loose", at: "$GIT/ORIG_HEAD"},
	{fixture: "loose", at: "$GIT/config.worktree"},
	{fixture: "loose", at: "$GIT/commondir", needed: true},
	// The working tree: a tracked file, the tracked .gitignore that does not exist (an untracked
	// pipe), .gitmodules.
	{fixture: "loose", at: "$DIR/README.md", needed: true},
	{fixture: "loose", at: "$DIR/greeter/.gitignore", needed: true},
	{fixture: "loose", at: "$DIR/.gitmodules", needed: true},
	// Packs, packed-refs, the commit-graph and its chain.
	{fixture: "packed", at: "$GIT/packed-refs", needed: true},
	{fixture: "packed", at: "$GIT/objects/pack/*.idx", needed: true},
	{fixture: "packed", at: "$GIT/objects/pack/*.pack", needed: true},
	{fixture: "packed", at: "$GIT/objects/pack", needed: true},
	{fixture: "packed", at: "$GIT/objects/info/commit-graph", needed: true},
	{fixture: "split", at: "$GIT/objects/info/commit-graphs/commit-graph-chain", needed: true},
	{fixture: "split", at: "$GIT/objects/info/commit-graphs/graph-*.graph", needed: true},
	// .git as a file, and the repository it names.
	{fixture: "gitfile", at: "$DIR/.git", needed: true},
	{fixture: "gitfile", at: "$GIT/HEAD", needed: true},
	{fixture: "gitfile", at: "$GIT/index", needed: true},
	// A linked worktree: its .git file, its git dir, the common dir it names.
	{fixture: "linked", at: "$DIR/.git", needed: true},
	{fixture: "linked", at: "$GIT/HEAD", needed: true},
	{fixture: "linked", at: "$GIT/index", needed: true},
	{fixture: "linked", at: "$GIT/commondir", needed: true},
	{fixture: "linked", at: "$COMMON/config", needed: true},
	{fixture: "linked", at: "$COMMON/info/exclude", needed: true},
	// Other special files: a socket, a device (through a link, as an agent cannot mknod).
	{fixture: "loose", at: "$GIT/config", needed: true, kind: "socket"},
	{fixture: "loose", at: "$GIT/HEAD", needed: true, kind: "zero"},
	{fixture: "loose", at: "$GIT/index", needed: true, kind: "zero", name: "index"},
	{fixture: "packed", at: "$GIT/packed-refs", needed: true, kind: "zero"},
	{fixture: "loose", at: "$DIR/" + taskDir + "/record.json", needed: true, kind: "zero"},
	{fixture: "loose", at: "$GIT/HEAD", needed: true, kind: "huge"},
	{fixture: "loose", at: "$GIT/config", needed: true, kind: "huge"},
	{fixture: "loose", at: "$GIT/refs/heads/main", needed: true, kind: "huge"},
	// Files git itself may read that the gate has no use for (a replace ref, grafts, attributes,
	// the reflog, pack side files, the pack list, a loose fan-out directory of no object the run
	// needs): an answer in time, whatever it is.
	{fixture: "loose", at: "$GIT/refs/replace/$HEADFULL"},
	{fixture: "loose", at: "$GIT/refs/tags/v1"},
	{fixture: "loose", at: "$GIT/refs/heads/other"},
	{fixture: "loose", at: "$GIT/info/grafts"},
	{fixture: "loose", at: "$GIT/info/attributes"},
	{fixture: "loose", at: "$GIT/logs/HEAD"},
	{fixture: "loose", at: "$GIT/MERGE_HEAD"},
	{fixture: "loose", at: "$GIT/objects/info/packs"},
	{fixture: "loose", at: "$GIT/objects/info/commit-graphs"},
	{fixture: "loose", at: "$GIT/objects/00"},
	{fixture: "loose", at: "$GIT/modules"},
	{fixture: "loose", at: "$DIR/.gitattributes"},
	{fixture: "loose", at: "$DIR/greeter/.gitattributes"},
	{fixture: "packed", at: "$GIT/objects/pack/pack-0000000000000000000000000000000000000000.keep"},
	{fixture: "packed", at: "$GIT/objects/pack/pack-0000000000000000000000000000000000000000.promisor"},
	{fixture: "packed", at: "$GIT/objects/pack/pack-0000000000000000000000000000000000000000.idx"},
	{fixture: "packed", at: "$GIT/objects/pack/pack-1111111111111111111111111111111111111111.pack"},
	{fixture: "packed", at: "$GIT/objects/info/packs"},
	// The project's own files under .geas.
	{fixture: "loose", at: "$DIR/.geas/state/run.json", needed: true},
	{fixture: "loose", at: "$DIR/.geas/state/events.jsonl", needed: true},
	{fixture: "loose", at: "$DIR/.geas/gate-policy.json", needed: true},
	{fixture: "loose", at: "$DIR/.geas/missions/m1/evolution/debt-register.json"}, // read for a risk that names debt
	{fixture: "loose", at: "$DIR/" + taskDir + "/contract.json", needed: true},
	{fixture: "loose", at: "$DIR/" + taskDir + "/record.json", needed: true},
	{fixture: "loose", at: "$DIR/" + taskDir + "/integration.json", needed: true},
	{fixture: "loose", at: "$DIR/" + taskDir + "/gate-history.jsonl", needed: true},
	{fixture: "loose", at: "$DIR/" + taskDir + "/contract.pinned.json"}, // read when the rules changed
	{fixture: "loose", at: "$DIR/" + taskDir + "/evidence/qa-engineer.json", needed: true},
	{fixture: "loose", at: "$DIR/" + taskDir + "/evidence", needed: true},
	{fixture: "loose", at: "$DIR/" + taskDir + "/gate-logs"},
	{fixture: "loose", at: "$DIR/" + taskDir + "/record.lock"},
}

// TestNothingInTheRepositoryHangsTheGate plants a named pipe at every path the gate reads, in
// the project and in its git directories, one at a time, and requires an answer within the
// deadline: not a pass, naming the file, wherever the run needs the file. Each fixture passes as
// it is (the honest control), so what changes the answer is the pipe.
func TestNothingInTheRepositoryHangsTheGate(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	sem := make(chan struct{}, 2) // two cores
	for name, fx := range fifoFixtures {
		t.Run("control/"+name, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			dir, _, _ := fx(t)
			code, out := gateWithin(t, dir)
			require.Equal(t, 0, code, "the honest %s project passes:\n%s", name, out)
		})
	}
	for _, c := range fifoCases {
		t.Run(c.fixture+"/"+c.kind+strings.NewReplacer("$", "", "/", "_").Replace(c.at), func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			dir, gitDir, commonDir := fifoFixtures[c.fixture](t)
			head := gitIn(t, dir, "rev-parse", "HEAD")
			at := strings.NewReplacer("$DIR", dir, "$GIT", gitDir, "$COMMON", commonDir, "$HEADFULL", head,
				"$HEADDIR", head[:2], "$HEAD", head[:2]+"/"+head[2:]).Replace(c.at)
			if matches, _ := filepath.Glob(at); len(matches) > 0 {
				at = matches[0]
			}
			require.False(t, strings.ContainsAny(at, "*?"), "nothing matches %s", c.at)
			plantSpecial(t, at, c.kind)
			code, out := gateWithin(t, dir)
			hookOut := hookWithin(t, dir)
			if !c.needed {
				return // answered in time
			}
			require.Contains(t, hookOut, `"decision": "block"`, "the Stop hook holds the stop")
			name := strings.NewReplacer("$HEADFILE", head[2:], "$HEADDIR", head[:2]).Replace(c.name)
			if name == "" {
				name = filepath.Base(at)
			}
			require.NotEqual(t, 0, code, "a named pipe at %s passes:\n%s", at, out)
			require.Contains(t, out, name, "the answer names the file")
		})
	}
}

// plantSpecial replaces whatever is at path (a file or a directory) with a named pipe, a unix
// socket (kind "socket", listening until the test ends), a link to /dev/zero (kind "zero") or a
// sparse file of 8 GiB (kind "huge").
func plantSpecial(t *testing.T, path, kind string) {
	t.Helper()
	require.NoError(t, os.RemoveAll(path))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	switch kind {
	case "":
		require.NoError(t, syscall.Mkfifo(path, 0o644))
	case "socket":
		l, err := net.Listen("unix", path)
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
	case "zero":
		require.NoError(t, os.Symlink("/dev/zero", path))
	case "huge":
		f, err := os.Create(path)
		require.NoError(t, err)
		require.NoError(t, f.Truncate(8<<30)) // sparse: no disk used
		require.NoError(t, f.Close())
	default:
		t.Fatalf("unknown kind %q", kind)
	}
}

// hookWithin runs the Stop hook on the example task in dir, as a first stop, and returns its
// output; a hook that has not answered within specialFileDeadline fails the test as hung.
func hookWithin(t *testing.T, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), specialFileDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, "geas", "-C", dir, "hook", "claude-stop", "--task", "t1")
	cmd.Stdin = strings.NewReader(`{"hook_event_name": "Stop", "stop_hook_active": false}`)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("geas hook claude-stop hung: no answer within %s\n%s", specialFileDeadline, out)
	}
	require.NoError(t, err, "%s", out)
	return string(out)
}

// gateWithin runs geas gate on the example task in dir and returns its exit code and output; a
// run that has not answered within specialFileDeadline fails the test as hung.
func gateWithin(t *testing.T, dir string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), specialFileDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, "geas", "-C", dir, "gate", "--task", "t1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("geas gate hung: no answer within %s\n%s", specialFileDeadline, out)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	code := 0
	if ee != nil {
		code = ee.ExitCode()
	}
	return code, fmt.Sprintf("exit %d\n%s", code, out)
}
