package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// identityProject is a project with task t1's evidence directory, a symbolic link into it, and
// the software-engineer's evidence file; it returns the project directory and its resolved .geas.
func identityProject(t *testing.T) (dir, geas string) {
	t.Helper()
	dir = t.TempDir()
	ev := filepath.Join(dir, ".geas", "missions", "m1", "tasks", "t1", "evidence")
	require.NoError(t, os.MkdirAll(ev, 0o755))
	require.NoError(t, os.Symlink(ev, filepath.Join(dir, "ev")))
	require.NoError(t, os.WriteFile(filepath.Join(ev, "software-engineer.json"),
		[]byte(`{"version": "1.0", "agent": "software-engineer", "task_id": "t1", "role": "implementer", "summary": "done"}`), 0o644))
	return dir, ResolveExisting(filepath.Join(dir, ".geas"))
}

func bashCall(dir, geas, agent, command string) IdentityCall {
	return IdentityCall{AgentType: agent, Tool: "Bash", Input: map[string]any{"command": command}, Cwd: dir, GeasDirs: []string{geas}}
}

// TestACallerCannotWriteUnderAnotherAgentsNameFromTheShell: a subagent's geas evidence add,
// approve, revalidate, budget grant and history reset under another agent's name is refused in
// every spelling the shell reads the same, and when the guard cannot read the command with
// certainty; the agent's own evidence, an authority approving as itself, and commands that
// write nothing under a name pass.
func TestACallerCannotWriteUnderAnotherAgentsNameFromTheShell(t *testing.T) {
	t.Parallel()
	dir, geas := identityProject(t)
	refused := []string{
		`geas evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent=design-authority --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent "design-authority" --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent 'Design_Authority' --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent design-author""ity --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent design\-authority --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent $'design-\x61uthority' --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent ｄesign-authority --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent software-engineer --agent design-authority --role reviewer --file r.json`,
		`geas -C . evidence --task t1 add --agent design-authority --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent software-engineer --name design-authority --role implementer --file r.json`,
		`go run ./cmd/geas evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		`./bin/geas-plugin evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		`/usr/local/bin/GEAS.exe evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		`"${CLAUDE_PLUGIN_ROOT}/bin/geas-plugin" evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		`GEAS_TASK=t1 env FOO=1 timeout 30 nice -n 5 geas evidence add --agent design-authority --role reviewer --file r.json`,
		`cd /tmp && geas evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		`true; geas evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		`echo '{}' | geas evidence add --task t1 --agent design-authority --role reviewer --file -`,
		`(geas evidence add --task t1 --agent design-authority --role reviewer --file r.json)`,
		`x=$(geas evidence add --task t1 --agent design-authority --role reviewer --file r.json)`,
		"echo `geas evidence add --task t1 --agent design-authority --role reviewer --file r.json`",
		`if true; then geas evidence add --task t1 --agent design-authority --role reviewer --file r.json; fi`,
		"true \\\n && geas evidence add --task t1 --agent design-authority --role reviewer --file r.json",
		`sh -c 'geas evidence add --task t1 --agent design-authority --role reviewer --file r.json'`,
		`bash -lc "geas evidence add --task t1 --agent design-authority --role reviewer --file r.json"`,
		`sudo -E bash -c 'cd x; geas evidence add --task t1 --agent design-authority --role reviewer --file r.json'`,
		`eval geas evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		"bash <<'EOF'\ngeas evidence add --task t1 --agent design-authority --role reviewer --file r.json\nEOF",
		`geas task approve --task t1 --by design-authority --reason ok`,
		`geas task approve --task t1 --by=product-authority --reason ok`,
		`geas task revalidate --task t1 --base HEAD --by design-authority --reason moved`,
		`geas task budget grant --task t1 --retries 3 --by orchestration-authority --reason more`,
		`geas task history reset --task t1 --by orchestration-authority --reason broken`,
		// What the guard cannot read with certainty.
		`A=design-authority; geas evidence add --task t1 --agent $A --role reviewer --file r.json`,
		`geas evidence add --task t1 --agent "$(cat who)" --role reviewer --file r.json`,
		`geas evidence add --task t1 "$FLAG" --role reviewer --file r.json`,
		`geas evidence add --task t1 --role reviewer --file r.json $EXTRA`,
		`geas $(echo ZXZpZGVuY2UgYWRk | base64 -d) --agent design-authority`,
		`geas $(printf 'evidence add --task t1 --agent design-authority')`,
		`$GEAS evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		`$GEAS evidence add --task t1 --agent software-engineer --role implementer --file r.json`,
		`"$(command -v geas)" task approve --task t1 --by design-authority --reason ok`,
		`eval "$(echo geas evidence add --agent design-authority)"`,
		`sh -c "$CMD evidence"`,
		`echo --agent design-authority | xargs geas evidence add --task t1 --role reviewer --file r.json --agent software-engineer`,
		`geas evidence add --task t1 --agent software-engineer --role reviewer --file r.json 'unterminated`,
		// A script written now, to be run later.
		`printf 'geas evidence add --task t1 --agent design-authority --role reviewer --file r.json' > s.sh && bash s.sh`,
		`cat > s.sh <<'EOF'` + "\ngeas task approve --task t1 --by design-authority --reason ok\nEOF",
		`python3 -c 'import subprocess; subprocess.run(["geas", "evidence", "add", "--task", "t1", "--agent", "design-authority", "--role", "reviewer", "--file", "r.json"])'`,
		`node -e 'require("child_process").execFileSync("geas", ["task", "budget", "grant", "--by=product-authority"])'`,
		`bash <<< 'geas evidence add --task t1 --agent "design-authority" --role reviewer --file r.json'`,
		`bash <<< "$(echo geas evidence add)"`,
		`echo 'geas task approve --task t1 --by design-authority --reason ok' | sh`,
		`source <(echo geas task approve --task t1 --by design-authority --reason ok)`,
		`script -qc 'geas evidence add --task t1 --agent design-authority --role reviewer --file r.json' /dev/null`,
		`ssh build-host 'geas task approve --task t1 --by design-authority --reason ok'`,
		`sed -i 's/software-engineer/design-authority/' .geas/missions/m1/tasks/t1/evidence/software-engineer.json`,
		`sed -ni 's/a/b/p' .geas/missions/m1/tasks/t1/evidence/software-engineer.json`,
		`git checkout forged -- .geas/missions/m1/tasks/t1/evidence/design-authority.json`,
		`git -C . restore --source forged .geas/missions/m1/tasks/t1/evidence`,
		// Shell writes into an evidence directory, whose content the guard cannot read.
		`echo '{"agent": "design-authority"}' > .geas/missions/m1/tasks/t1/evidence/design-authority.json`,
		`echo '{"agent": "design-authority"}' > .geas/missions/m1/tasks/t1/evidence/software-engineer.json`,
		`echo x >> .GEAS/Missions/m1/tasks/t1/EVIDENCE/Design-Authority.json`,
		`echo x > ./.geas/missions/m1/tasks/../tasks/t1/evidence/x.json`,
		`echo x > ev/design-authority-review.json`,
		`cat r.json | tee .geas/missions/m1/tasks/t1/evidence/design-authority.json`,
		`cp r.json .geas/missions/m1/tasks/t1/evidence/design-authority.json`,
		`mv r.json .geas/missions/m1/tasks/t1/evidence/`,
		`dd if=r.json of=.geas/missions/m1/tasks/t1/evidence/design-authority.json`,
		`rm .geas/missions/m1/tasks/t1/evidence/software-engineer.json`,
		`cd .geas/missions/m1/tasks/t1/evidence && echo x > design-authority.json`,
		`cd "$D" && echo x > evidence/design-authority.json`,
		`echo x > "$EVIDENCE_DIR/design-authority.json"`,
		`python3 -c 'open(".geas/missions/m1/tasks/t1/evidence/design-authority.json","w")' .geas/missions/m1/tasks/t1/evidence/design-authority.json`,
		`find .geas -name '*.json' -delete .geas/missions/m1/tasks/t1/evidence`,
	}
	for _, cmd := range refused {
		why := CheckIdentity(bashCall(dir, geas, "geas:software-engineer", cmd))
		assert.NotEmpty(t, why, "not refused: %s", cmd)
		assert.Contains(t, why, `you run as "geas:software-engineer"`, cmd)
	}

	allowed := []string{
		`geas evidence add --task t1 --agent software-engineer --role implementer --file r.json`,
		`geas evidence add --task t1 --agent=Software_Engineer --role implementer --file r.json`,
		`geas evidence add --task t1 --agent software-engineer --name software-engineer-build --role implementer --file r.json`,
		`geas evidence add --task "$GEAS_TASK" --agent software-engineer --role implementer --data "$(cat r.json)"`,
		`geas evidence add --task=$T --agent software-engineer --role implementer --file "$F"`,
		`geas gate --task t1`,
		`"$CLAUDE_PLUGIN_ROOT/bin/geas-plugin" evidence add --task t1 --agent software-engineer --role implementer --file r.json`,
		`geas gate --task "$T" --format json`,
		`geas evidence template --task t1 --agent design-authority`,
		`cat .geas/missions/m1/tasks/t1/evidence/design-authority.json`,
		`jq .agent .geas/missions/m1/tasks/t1/evidence/*.json`,
		`go test ./... > /tmp/out.txt 2>&1`,
		`echo done > notes.txt`,
		`git commit -m "task approve flow"`,
		`$EDITOR src/main.go`,
		`sed -n 1,20p .geas/missions/m1/tasks/t1/evidence/design-authority.json`,
		`git diff -- .geas/missions/m1/tasks/t1/evidence/ && git add .geas/missions/m1/tasks/t1/evidence/software-engineer.json`,
		`git -C . log --oneline -- .geas/missions/m1/tasks/t1/evidence`,
		`for f in .geas/missions/*/tasks/*/evidence/*.json; do jq .verdict "$f"; done`,
		`bash scripts/build.sh`,
		`printf 'geas evidence add --task t1 --agent software-engineer --role implementer --file r.json\n' > s.sh`,
		`git commit -m "docs: geas evidence add --agent, as in the README"`,
	}
	for _, cmd := range allowed {
		assert.Empty(t, CheckIdentity(bashCall(dir, geas, "geas:software-engineer", cmd)), cmd)
	}

	// An authority approves, grants and resets as itself; the main session is not checked.
	for _, cmd := range []string{
		`geas task approve --task t1 --by design-authority --reason ok`,
		`geas evidence add --task t1 --agent design-authority --role reviewer --file r.json`,
		`geas task revalidate --task t1 --base HEAD --by design-authority --reason moved`,
	} {
		assert.Empty(t, CheckIdentity(bashCall(dir, geas, "design-authority", cmd)), cmd)
		assert.Empty(t, CheckIdentity(bashCall(dir, geas, "geas:design-authority", cmd)), cmd)
		assert.Empty(t, CheckIdentity(bashCall(dir, geas, "", cmd)), cmd)
		assert.NotEmpty(t, CheckIdentity(bashCall(dir, geas, "product-authority", cmd)), cmd)
	}
}

// TestAFileToolCannotWriteAnotherAgentsEvidence: Write, Edit, MultiEdit and NotebookEdit into an
// evidence directory are refused when the file's name is another agent's, or when the file, once
// written, names another agent, in every path spelling; the caller's own evidence file with its
// own name passes.
func TestAFileToolCannotWriteAnotherAgentsEvidence(t *testing.T) {
	t.Parallel()
	dir, geas := identityProject(t)
	ev := ".geas/missions/m1/tasks/t1/evidence/"
	call := func(tool string, in map[string]any) string {
		return CheckIdentity(IdentityCall{AgentType: "software-engineer", Tool: tool, Input: in, Cwd: dir, GeasDirs: []string{geas}})
	}
	own := `{"agent": "software-engineer", "role": "implementer"}`
	for _, p := range []string{
		ev + "design-authority.json", ev + "design-authority-review.json", ev + "DESIGN-AUTHORITY.JSON",
		ev + "design_authority.json", "./" + ev + "design-authority.json", "src/../" + ev + "design-authority.json",
		filepath.Join(dir, ev, "design-authority.json"), "ev/design-authority.json", ev + "design-authority.json.",
		".GEAS/missions/m1/TASKS/t1/Evidence/design-authority.json",
	} {
		assert.NotEmpty(t, call("Write", map[string]any{"file_path": p, "content": own}), p)
	}
	assert.NotEmpty(t, call("Write", map[string]any{"file_path": ev + "software-engineer.json", "content": `{"agent": "design-authority"}`}))
	assert.NotEmpty(t, call("Write", map[string]any{"file_path": ev + "notes.json", "content": `{"agent": "software-engineer", "agent": "design-authority"}`}))
	assert.NotEmpty(t, call("Write", map[string]any{"file_path": ev + "notes.json", "content": `{"Agent": "design-authority"}`}))
	assert.NotEmpty(t, call("Edit", map[string]any{"file_path": ev + "software-engineer.json",
		"old_string": `"agent": "software-engineer"`, "new_string": `"agent": "design-authority"`}))
	assert.NotEmpty(t, call("Edit", map[string]any{"file_path": ev + "software-engineer.json",
		"old_string": `software-engineer`, "new_string": `design-authority`, "replace_all": true}))
	assert.NotEmpty(t, call("MultiEdit", map[string]any{"file_path": ev + "software-engineer.json", "edits": []any{
		map[string]any{"old_string": `"summary": "done"`, "new_string": `"summary": "fine"`},
		map[string]any{"old_string": `"software-engineer"`, "new_string": `"design-authority"`},
	}}))
	assert.NotEmpty(t, call("Edit", map[string]any{"file_path": ev + "missing-software-engineer.json", "old_string": "a", "new_string": "b"}))
	assert.NotEmpty(t, call("NotebookEdit", map[string]any{"notebook_path": ev + "software-engineer.json"}))

	assert.NotEmpty(t, call("Write", map[string]any{"file_path": ev + "software-engineer.json", "content": "\ufeff" + `{"agent": "design-authority"}`}),
		"content the guard cannot read as one JSON object")
	assert.NotEmpty(t, call("Write", map[string]any{"file_path": ev + "software-engineer.json", "content": "agent: design-authority"}))
	// A script written now to be run later (a git hook, a shell or Python script).
	approve := "#!/bin/sh\ngeas task approve --task t1 --by design-authority --reason ok\n"
	assert.NotEmpty(t, call("Write", map[string]any{"file_path": "scripts/review.sh", "content": approve}))
	assert.NotEmpty(t, call("Write", map[string]any{"file_path": ".git/hooks/post-commit", "content": approve}))
	assert.NotEmpty(t, call("Edit", map[string]any{"file_path": "Makefile", "old_string": "x", "new_string": "\tgeas evidence add --agent=qa-engineer --role tester --file t.json"}))
	assert.NotEmpty(t, call("Write", map[string]any{"file_path": "tools/review.py", "content": `subprocess.run(["geas", "evidence", "add", "--agent", "design-authority"])`}))
	assert.Empty(t, call("Write", map[string]any{"file_path": "docs/usage.md", "content": approve}), "documentation is read, not run")
	assert.Empty(t, call("Write", map[string]any{"file_path": "scripts/own.sh", "content": "geas evidence add --task t1 --agent software-engineer --role implementer --file r.json\n"}))

	assert.Empty(t, call("Write", map[string]any{"file_path": ev + "software-engineer.json", "content": own}))
	assert.Empty(t, call("Write", map[string]any{"file_path": ev + "software-engineer-build.json", "content": own}))
	assert.Empty(t, call("Write", map[string]any{"file_path": ev + "notes.json", "content": own}))
	assert.Empty(t, call("Edit", map[string]any{"file_path": ev + "software-engineer.json", "old_string": `"summary": "done"`, "new_string": `"summary": "design-authority asked for more"`}))
	assert.Empty(t, call("Write", map[string]any{"file_path": "src/design-authority.json", "content": `{"agent": "design-authority"}`}))
	assert.Empty(t, CheckIdentity(IdentityCall{Tool: "Write", Input: map[string]any{"file_path": ev + "design-authority.json", "content": own}, Cwd: dir, GeasDirs: []string{geas}}))
}

// TestAnMCPToolCannotWriteUnderAnotherAgentsName: an MCP tool that runs a command (a command
// line, or a program and its arguments) or writes a path into an evidence directory is held to
// the same rules; geas's own MCP tools, which only read, pass.
func TestAnMCPToolCannotWriteUnderAnotherAgentsName(t *testing.T) {
	t.Parallel()
	dir, geas := identityProject(t)
	call := func(tool string, in map[string]any) string {
		return CheckIdentity(IdentityCall{AgentType: "geas:software-engineer", Tool: tool, Input: in, Cwd: dir, GeasDirs: []string{geas}})
	}
	assert.NotEmpty(t, call("mcp__shell__execute", map[string]any{"command": "geas evidence add --task t1 --agent design-authority --role reviewer --file r.json"}))
	assert.NotEmpty(t, call("mcp__proc__run", map[string]any{"command": "geas", "args": []any{"task", "approve", "--task", "t1", "--by", "design-authority", "--reason", "ok"}}))
	assert.NotEmpty(t, call("mcp__proc__run", map[string]any{"options": map[string]any{"cmd": "geas task budget grant --task t1 --retries 2 --by product-authority --reason x"}}))
	assert.NotEmpty(t, call("mcp__filesystem__write_file", map[string]any{"path": ".geas/missions/m1/tasks/t1/evidence/design-authority.json", "content": "{}"}))
	assert.NotEmpty(t, call("mcp__proc__spawn", map[string]any{"command": []any{"geas", "evidence", "add", "--agent", "design-authority"}}))
	assert.NotEmpty(t, call("mcp__filesystem__write_file", map[string]any{"path": "s.sh", "content": "geas task approve --task t1 --by design-authority --reason ok"}))

	assert.Empty(t, call("mcp__shell__execute", map[string]any{"command": "geas evidence add --task t1 --agent software-engineer --role implementer --file r.json"}))
	assert.Empty(t, call("mcp__filesystem__read_file", map[string]any{"path": ".geas/missions/m1/tasks/t1/evidence/design-authority.json"}))
	assert.Empty(t, call("mcp__geas__geas_gate_evaluate", map[string]any{"task_id": "t1"}))
	assert.Empty(t, call("mcp__plugin_geas_geas__geas_task_status", map[string]any{"task_id": "t1"}))
}

// TestTheCallerIsTheAgentAfterItsPluginPrefix: agent_type "plugin:agent" names agent, folded as
// evidence agents are; an empty agent_type names nobody.
func TestTheCallerIsTheAgentAfterItsPluginPrefix(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "software-engineer", CallerAgent("geas:software-engineer"))
	assert.Equal(t, "software-engineer", CallerAgent("Software_Engineer"))
	assert.Equal(t, "design-authority", CallerAgent("my-plugin:sub:design-authority"))
	assert.Equal(t, "", CallerAgent(""))
	assert.Equal(t, "", CallerAgent("geas:"))
}

// FuzzAnAgentFlagIsRefusedUnlessItIsTheCaller: whatever a quoted --agent value holds, geas
// evidence add is refused exactly when the value is not the caller's name, and the guard never
// panics on a command line.
func FuzzAnAgentFlagIsRefusedUnlessItIsTheCaller(f *testing.F) {
	for _, s := range []string{"software-engineer", "design-authority", "Software_Engineer", "software-engineer ", "$(x)", "'", ""} {
		f.Add(s, "geas evidence add --agent x; "+s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, agent, line string) {
		_ = CheckIdentity(bashCall(dir, dir, "software-engineer", line))
		if strings.ContainsRune(agent, 0) {
			return
		}
		cmd := "geas evidence add --task t1 --role reviewer --file r.json --agent '" + strings.ReplaceAll(agent, "'", `'"'"'`) + "'"
		refused := CheckIdentity(bashCall(dir, dir, "software-engineer", cmd)) != ""
		if refused == (foldName(agent) == "software-engineer") {
			t.Fatalf("--agent %q: refused %v", agent, refused)
		}
	})
}
