#!/usr/bin/env bash
# geas mcp under a real MCP client: the official TypeScript SDK (@modelcontextprotocol/sdk, pinned
# in package-lock.json) over stdio, against a geas built here, in a throw-away copy of
# testdata/example whose task t1 has a 10 s eval command (client.mjs says what is checked).
# Skips, saying why, when node (>= 18), npm or git is missing. Needs the npm registry for `npm ci`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

for tool in node npm git go; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "mcp-node: skipped: $tool is not installed"
    exit 0
  fi
done
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "mcp-node: skipped: node $(node --version) is older than 18, which @modelcontextprotocol/sdk needs"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/geas" ./cmd/geas)
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

# The project: the example, its greeter committed as the gate's tests do (cmd/script_test.go's
# commitGreeter), with base_snapshot pinned and a 10 s eval command that prints a line a second.
p="$work/project"
cp -R "$root/testdata/example" "$p"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME="geas test" GIT_AUTHOR_EMAIL=test@geas.invalid
export GIT_COMMITTER_NAME="geas test" GIT_COMMITTER_EMAIL=test@geas.invalid
git -C "$p" init -q -b main
git -C "$p" add -A
git -C "$p" commit -q -m base
base=$(git -C "$p" rev-parse HEAD)
mkdir -p "$p/greeter"
printf 'package main\n\nfunc main() {}\n' >"$p/greeter/main.go"
printf '# greeter\n\nRun with --verbose to print the configuration.\n' >"$p/README.md"
node - "$p/.geas/missions/m1/tasks/t1/contract.json" "$base" <<'JS'
const fs = require("fs");
const [file, base] = process.argv.slice(2);
const c = JSON.parse(fs.readFileSync(file, "utf8"));
if (c.base_snapshot !== "HEAD") throw new Error(`base_snapshot is ${c.base_snapshot}, not HEAD to pin`);
c.base_snapshot = base;
c.eval_commands = ['i=0; while [ "$i" -lt 10 ]; do i=$((i+1)); echo "tick $i"; sleep 1; done'];
fs.writeFileSync(file, JSON.stringify(c, null, 2) + "\n");
JS
git -C "$p" add -A
git -C "$p" commit -q -m greeter

node "$here/client.mjs" "$work/geas" "$p"
