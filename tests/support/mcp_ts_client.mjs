// An MCP client on the official TypeScript SDK v1 (npm @modelcontextprotocol/sdk,
// what most shipped agent hosts embed; it speaks up to 2025-11-25), for
// tests/mcp_server.rs. Connects, lists the tools, runs a pipeline to its
// approval gate, adds an exposed workflow file, waits for tools/list_changed
// (the SDK's listChanged handler refetches the list), calls the new tool,
// and prints one JSON object with what it saw.
//
//   node mcp_ts_client.mjs stdio CLAWDIS HOME WORKFLOW_DIR
//   node mcp_ts_client.mjs http URL TOKEN WORKFLOW_DIR
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, a, b, workflows] = process.argv.slice(2);
let heard;
const changed = new Promise((resolve) => { heard = resolve; });
const client = new Client({ name: 'ts-v1', version: '1' }, {
  listChanged: {
    tools: {
      onChanged: (error, tools) => {
        if (!error && tools.some((t) => t.name === 'workflow.from_ts')) heard(tools.map((t) => t.name));
      },
    },
  },
});
const transport = mode === 'http'
  ? new StreamableHTTPClientTransport(new URL(a), { requestInit: { headers: { Authorization: `Bearer ${b}` } } })
  : new StdioClientTransport({ command: a, args: ['--home', b, 'mcp'], stderr: 'inherit' });
await client.connect(transport);
const out = { server: client.getServerVersion() };
out.tools = (await client.listTools()).tools.map((t) => t.name);
const paused = await client.callTool({
  name: 'lobster_run',
  arguments: { pipeline: "exec --json 'echo [1,2]' | approve --prompt 'ts?'" },
});
out.paused = paused.structuredContent;
out.pausedText = paused.content[0].text;
const file = join(workflows, 'from_ts.lobster');
writeFileSync(file, "description: Added by the TypeScript client\nexpose_as_tool: true\nsteps:\n  - id: s\n    run: echo '[42]'\n");
const timeout = new Promise((resolve) => setTimeout(() => resolve(null), 20000).unref());
out.changed = await Promise.race([changed, timeout]);
const ran = await client.callTool({ name: 'workflow.from_ts', arguments: {} });
out.ran = ran.structuredContent;
rmSync(file);
await client.close();
console.log(JSON.stringify(out));
