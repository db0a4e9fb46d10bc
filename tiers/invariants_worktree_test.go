package tiers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/vocab"
)

// TestAVerdictIsAboutOneCommit (SPEC §2.7, §5.1): head names the commit that was evaluated, and
// the eval commands, detectors and stub scan read exactly that commit's content. A working tree
// that differs from it blocks (worktree_mismatch), an empty change blocks (empty_change), an eval
// command that changes the tree blocks naming the command, and eval_checkout isolated runs tier 1
// and the detectors in a checkout of the head.
func TestAVerdictIsAboutOneCommit(t *testing.T) {
	t.Parallel()

	t.Run("control: the committed change passes at HEAD", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"grep -q 'func main() {}' greeter/main.go"} })
		_, res, _ := f.evaluate()
		assertPass(t, res)
		assert.Equal(t, f.git("rev-parse", "HEAD"), res.Head)
		c := findCheck(t, res.Checks, "worktree")
		assert.Equal(t, StatusPass, c.Status)
		assert.Contains(t, c.Evidence, "HEAD is "+short(res.Head)+" (HEAD); the 2 tracked files outside the bookkeeping paths match it")
		assert.Equal(t, StatusPass, findCheck(t, res.Checks, "empty_change").Status)
	})

	t.Run("HEAD one commit past integration.commit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		integrated := f.git("rev-parse", "HEAD")
		f.write("greeter/main.go", "package main\n\nfunc main() { println(\"later\") }\n")
		later := f.commit("later")
		f.record(func(m map[string]any) { m["integration"].(map[string]any)["commit"] = integrated })
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseWorktreeMismatch)
		c := findCheck(t, res.Checks, "worktree")
		assert.Contains(t, c.Evidence, "HEAD is "+short(later)+", the integration head is "+short(integrated)+" (integration.commit "+integrated+")")
		assert.Contains(t, c.Evidence, "1 file differs from it: greeter/main.go")
		assert.Equal(t, integrated, res.Head)
		assert.Empty(t, res.EvalRuns, "tier 1 does not run on a tree that is not the head")
	})

	t.Run("an uncommitted edit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.write("greeter/main.go", "package main\n\nfunc main() { /* uncommitted */ }\n")
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseWorktreeMismatch)
		assert.Contains(t, findCheck(t, res.Checks, "worktree").Evidence, "HEAD is the integration head "+short(res.Head)+" (HEAD); 1 file differs from it: greeter/main.go; commit the work")
	})

	t.Run("integration.commit equal to the base", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		base := f.git("rev-parse", "HEAD~1")
		f.git("checkout", "-q", base) // the working tree is that commit too: only the empty change is wrong
		f.record(func(m map[string]any) { m["integration"].(map[string]any)["commit"] = base })
		f.contract(func(m map[string]any) { m["base_snapshot"] = base })
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseEmptyChange)
		assert.Equal(t, []vocab.CauseCode{vocab.CauseEmptyChange}, causeCodes(res.Causes))
		assert.Contains(t, findCheck(t, res.Checks, "empty_change").Evidence, "is the integration head "+short(base)+" (integration.commit "+base+"): the diff is empty")
	})

	t.Run("base_snapshot HEAD", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) { m["base_snapshot"] = "HEAD" })
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseEmptyChange)
		assert.Contains(t, findCheck(t, res.Checks, "empty_change").Evidence, "(base_snapshot HEAD) is the integration head")
	})

	t.Run("a commit of bookkeeping files only", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		base := f.git("rev-parse", "HEAD")
		f.write(taskFile("notes.json"), "{}\n")
		f.commit("notes")
		f.contract(func(m map[string]any) { m["base_snapshot"] = base })
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseEmptyChange)
		assert.Contains(t, findCheck(t, res.Checks, "empty_change").Evidence, "changes only bookkeeping files (.geas/missions/m1/tasks/t1/notes.json)")
	})

	t.Run("a commit with the same tree as the base", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		base := f.git("rev-parse", "HEAD")
		f.git("commit", "-q", "--allow-empty", "-m", "nothing")
		f.contract(func(m map[string]any) { m["base_snapshot"] = base })
		f.commit("pin") // the contract edit is bookkeeping: the tree of the work is the base's
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseEmptyChange)
	})

	for _, tc := range []struct {
		name, command, file string
	}{
		{"an eval command that edits a tracked file", "echo '// TODO: later' >> greeter/main.go", "greeter/main.go"},
		{"an eval command that leaves an untracked file", "touch greeter/generated.go", "greeter/generated.go"},
		{"an eval command that deletes a tracked file", "rm README.md", "README.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			f.contract(func(m map[string]any) { m["eval_commands"] = []any{"true", tc.command, "true"} })
			_, res, _ := f.evaluate()
			assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseWorktreeMismatch)
			c := findCheck(t, res.Checks, "worktree_after_eval")
			assert.Equal(t, 1, c.Tier)
			assert.Contains(t, c.Evidence, "eval command 2 `"+tc.command+"` changed the working tree: HEAD is the integration head")
			assert.Contains(t, c.Evidence, "1 file differs from it: "+tc.file)
			assert.Equal(t, StatusSkipped, findCheck(t, res.Checks, "eval_command_3").Status, "the commands stop there")
		})
	}

	t.Run("an eval command that writes an ignored build output", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.write(".gitignore", "/build/\n")
		f.commit("ignore build outputs")
		f.contract(func(m map[string]any) {
			m["base_snapshot"] = f.git("rev-parse", "HEAD~2")
			m["eval_commands"] = []any{"mkdir -p build && echo out > build/greeter"}
		})
		_, res, _ := f.evaluate()
		assertPass(t, res)
		assert.False(t, hasCheck(res.Checks, "worktree_after_eval"))
	})

	t.Run("eval_checkout isolated runs the head, not the working tree", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		policyInBase(f, `{"eval_checkout": "isolated"}`)
		integrated := f.git("rev-parse", "HEAD")
		f.write("greeter/main.go", "package main\n\nfunc main() { println(\"later\") }\n")
		f.commit("later")
		f.write("README.md", "# edited after the commit, no flag documented\n") // uncommitted
		f.write("scratch.txt", "untracked\n")
		where := filepath.Join(t.TempDir(), "where")
		f.record(func(m map[string]any) { m["integration"].(map[string]any)["commit"] = integrated })
		f.contract(func(m map[string]any) {
			m["eval_commands"] = []any{"grep -q 'func main() {}' greeter/main.go && pwd > " + where}
		})
		in, res, _ := f.evaluate()
		assertPass(t, res)
		assert.Equal(t, policy.EvalCheckoutIsolated, in.Policy.EvalCheckout)
		assert.Equal(t, integrated, res.Head)
		c := findCheck(t, res.Checks, "worktree")
		assert.Equal(t, StatusSkipped, c.Status)
		assert.Contains(t, c.Evidence, "eval_checkout is isolated: tier 1 and the detectors run in a checkout of "+short(integrated))
		// The regex detector on README.md read the head's README, not the edited one.
		assert.Equal(t, StatusPass, findCheck(t, res.Checks, "criterion:readme").Status)
		dir := strings.TrimSpace(string(f.readAbs(where)))
		assert.NotEqual(t, f.dir, dir)
		assert.Contains(t, filepath.Base(dir), "geas-checkout-")
		_, err := os.Stat(dir)
		assert.ErrorIs(t, err, os.ErrNotExist, "the checkout is removed after the run")
	})

	t.Run("eval_checkout isolated: an eval command cannot rewrite what the detectors read", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		policyInBase(f, `{"eval_checkout": "isolated"}`)
		f.write("README.md", "# greeter\n")
		f.commit("the README does not document the flag")
		f.contract(func(m map[string]any) { m["eval_commands"] = []any{"echo 'Run with --verbose.' >> README.md"} })
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseWorktreeMismatch)
		assert.Contains(t, findCheck(t, res.Checks, "worktree_after_eval").Evidence,
			"eval command 1 `echo 'Run with --verbose.' >> README.md` changed the isolated checkout of "+short(res.Head)+": 1 file differs from it: README.md")
		assert.NotContains(t, string(f.read("README.md")), "--verbose", "the project itself is untouched")
	})

	t.Run("eval_checkout isolated still needs a change", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.write(".geas/gate-policy.json", `{"eval_checkout": "isolated"}`)
		f.commit("policy")
		f.contract(func(m map[string]any) { m["base_snapshot"] = "HEAD" })
		_, res, _ := f.evaluate()
		assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseEmptyChange)
	})

	t.Run("a profile without a base skips the git checks and says so", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, true)
		f.contract(func(m map[string]any) {
			m["gate_profile"], m["status"], m["base_snapshot"] = "artifact_only", "reviewed", ""
		})
		f.write("README.md", "# uncommitted docs\n\nRun with --verbose.\n")
		_, res, _ := f.evaluate()
		c := findCheck(t, res.Checks, "worktree")
		assert.Equal(t, StatusSkipped, c.Status)
		assert.Equal(t, "profile artifact_only without a base_snapshot names no commit: the git checks are skipped", c.Evidence)
		assert.False(t, hasCheck(res.Checks, "empty_change"))
	})
}

// TestTheWorkingTreeCannotHideAChange (SPEC §5.1): the working-tree check reads the index with the
// gate's own rules, so an uncommitted change that git status does not show still blocks.
func TestTheWorkingTreeCannotHideAChange(t *testing.T) {
	t.Parallel()
	const file = "greeter/main.go"
	evil := "package main\n\nfunc main() { evil() }\n"
	sameSize := "package main\n\nfunc main() {}\n"
	sameSize = strings.Replace(sameSize, "main() {}", "evil() {}", 1) // same length as the original
	tests := []struct {
		name        string
		hide        func(f *fixture)
		gitIsFooled bool // git status --porcelain shows nothing
	}{
		{"assume-unchanged", func(f *fixture) {
			f.git("update-index", "--assume-unchanged", file)
			f.write(file, evil)
		}, true},
		{"skip-worktree", func(f *fixture) {
			f.git("update-index", "--skip-worktree", file)
			f.write(file, evil)
		}, true},
		{"a clean filter in .git/config", func(f *fixture) {
			f.write(".git/info/attributes", file+" filter=hide\n")
			f.git("config", "filter.hide.clean", "cat "+f.path(".git/original"))
			f.git("config", "filter.hide.smudge", "cat")
			f.write(".git/original", string(f.read(file)))
			f.write(file, evil)
			f.git("add", file) // the clean filter stores the original blob beside the new stat data
		}, true},
		{"a same-size edit with its mtime restored, core.checkStat=minimal", func(f *fixture) {
			fi := settleIndex(f)
			f.git("config", "core.checkStat", "minimal")
			require.NoError(t, os.WriteFile(f.path(file+".new"), []byte(sameSize), 0o644))
			require.NoError(t, os.Rename(f.path(file+".new"), f.path(file)))
			require.NoError(t, os.Chtimes(f.path(file), fi.ModTime(), fi.ModTime()))
		}, true},
		{"a same-size edit in place with its mtime restored, core.trustctime=false", func(f *fixture) {
			fi := settleIndex(f)
			f.git("config", "core.trustctime", "false")
			require.NoError(t, os.WriteFile(f.path(file), []byte(sameSize), 0o644))
			require.NoError(t, os.Chtimes(f.path(file), fi.ModTime(), fi.ModTime()))
		}, true},
		{"staged but not committed", func(f *fixture) {
			f.write(file, evil)
			f.git("add", file)
		}, false},
		{"staged, then the file put back", func(f *fixture) {
			original := string(f.read(file))
			f.write(file, evil)
			f.git("add", file)
			f.write(file, original)
		}, false},
		{"untracked file", func(f *fixture) { f.write("greeter/extra.go", "package main\n") }, false},
		{"deleted file", func(f *fixture) { f.remove(file) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			tc.hide(f)
			if tc.gitIsFooled {
				require.Empty(t, f.git("status", "--porcelain"), "the variant hides the change from git status")
			}
			_, res, _ := f.evaluate()
			assertNotPass(t, res, vocab.VerdictBlock, vocab.CauseWorktreeMismatch)
			c := findCheck(t, res.Checks, "worktree")
			want := file
			if tc.name == "untracked file" {
				want = "greeter/extra.go"
			}
			assert.Contains(t, c.Evidence, "1 file differs from it: "+want)
			assert.Empty(t, res.EvalRuns)
		})
	}
}

// settleIndex backdates every tracked file and refreshes the index, so that its stat data matches
// the files and no entry is racily clean: only then can git be talked out of a change. It returns
// greeter/main.go's stat.
func settleIndex(f *fixture) os.FileInfo {
	f.t.Helper()
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, p := range strings.Split(f.git("ls-files"), "\n") {
		require.NoError(f.t, os.Chtimes(f.path(p), past, past))
	}
	f.git("update-index", "--refresh")
	fi, err := os.Stat(f.path("greeter/main.go"))
	require.NoError(f.t, err)
	return fi
}

func (f *fixture) readAbs(path string) []byte {
	f.t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(f.t, err)
	return b
}

// policyInBase commits policy as .geas/gate-policy.json, makes that commit the task's base (the
// policy that judges a change is the base's, SPEC §5.3 B) and commits a change on top of it.
func policyInBase(f *fixture, policy string) {
	f.t.Helper()
	f.write(".geas/gate-policy.json", policy)
	base := f.commit("policy")
	f.write("greeter/more.go", "package main\n")
	f.commit("more")
	f.contract(func(m map[string]any) { m["base_snapshot"] = base })
}
