// geas mcp under the official TypeScript MCP SDK, over stdio (run.sh builds geas and the project).
//
// Usage: node client.mjs GEAS_BINARY PROJECT_DIR
//
// The project's task t1 has an eval command of about 10 s. Each call has a 3 s request timeout:
//   1. with resetTimeoutOnProgress: true it must succeed, because geas sends progress
//      notifications while the eval runs (printed: how many, and the verdict, which must be pass);
//   2. with resetTimeoutOnProgress: false the same call must time out (RequestTimeout), which
//      shows the first one could fail; the server must still answer a call afterwards.
// The client lists the tools first, so the SDK validates each structured result against the
// tool's outputSchema (with its own validator). Exit 0 when all of this holds, 1 otherwise.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

const [geas, project] = process.argv.slice(2);
if (!geas || !project) {
  console.error("usage: node client.mjs GEAS_BINARY PROJECT_DIR");
  process.exit(2);
}
const TIMEOUT_MS = 3000;

function fail(msg) {
  console.error(`mcp-node: FAIL: ${msg}`);
  process.exitCode = 1;
}

const transport = new StdioClientTransport({ command: geas, args: ["-C", project, "mcp"], stderr: "inherit" });
const client = new Client({ name: "geas-mcp-node-test", version: "0.0.0" });
await client.connect(transport);
console.log(`mcp-node: connected to ${client.getServerVersion()?.name} ${client.getServerVersion()?.version}`);

const { tools } = await client.listTools();
for (const t of tools) {
  if (!t.outputSchema) fail(`tool ${t.name} declares no outputSchema`);
}
console.log(`mcp-node: ${tools.length} tools, each with an outputSchema: ${tools.map((t) => t.name).join(", ")}`);

// 1. A 10 s eval, a 3 s timeout reset by each progress notification: must succeed.
const progress = [];
const started = Date.now();
try {
  const res = await client.callTool({ name: "geas_gate_evaluate", arguments: { task: "t1" } }, undefined, {
    timeout: TIMEOUT_MS,
    resetTimeoutOnProgress: true,
    onprogress: (p) => progress.push(p),
  });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  const verdict = res.structuredContent?.verdict;
  console.log(`mcp-node: resetTimeoutOnProgress true: ${progress.length} progress notifications in ${secs}s, verdict ${verdict}`);
  if (res.isError) fail(`the tool failed: ${JSON.stringify(res.content)}`);
  if (verdict !== "pass") fail(`verdict ${verdict}, want pass`);
  if (progress.length < 3) fail(`${progress.length} progress notifications, want at least 3`);
  for (let i = 1; i < progress.length; i++) {
    if (!(progress[i].progress > progress[i - 1].progress)) {
      fail(`progress ${progress[i].progress} after ${progress[i - 1].progress}: not increasing`);
    }
  }
  const live = progress.filter((p) => /running .*: tick \d+/.test(p.message ?? ""));
  console.log(`mcp-node: ${live.length} of them quote the eval's live output, e.g. ${JSON.stringify(live.at(-1)?.message)}`);
  if (live.length === 0) fail("no progress notification quotes the eval's output");
} catch (e) {
  fail(`with resetTimeoutOnProgress the call must succeed: ${e}`);
}

// 2. The same call without the reset: must time out.
const ignored = [];
try {
  const res = await client.callTool({ name: "geas_gate_evaluate", arguments: { task: "t1" } }, undefined, {
    timeout: TIMEOUT_MS,
    resetTimeoutOnProgress: false,
    onprogress: (p) => ignored.push(p),
  });
  fail(`without resetTimeoutOnProgress the call must time out, but it answered ${res.structuredContent?.verdict}`);
} catch (e) {
  if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
    console.log(`mcp-node: resetTimeoutOnProgress false: timed out after ${TIMEOUT_MS} ms as expected (${ignored.length} progress notifications did not reset it)`);
  } else {
    fail(`want a RequestTimeout error, got ${e}`);
  }
}

// The server cancelled that run and still serves.
try {
  const st = await client.callTool({ name: "geas_task_status", arguments: { task: "t1" } }, undefined, { timeout: 30000 });
  console.log(`mcp-node: after the timeout the server still answers: t1 is ${st.structuredContent?.status}`);
  if (st.structuredContent?.status !== "integrated") fail(`t1 status ${st.structuredContent?.status}, want integrated (nothing written)`);
} catch (e) {
  fail(`the server no longer answers after a cancelled call: ${e}`);
}

await client.close();
if (process.exitCode) {
  console.error("mcp-node: FAILED");
} else {
  console.log("mcp-node: ok");
}
