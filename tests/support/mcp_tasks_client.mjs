// An agent host on the official MCP Tasks client (npm
// @modelcontextprotocol/ext-tasks 0.2.2 over @modelcontextprotocol/client
// 2.4.0), for tests/mcp_tasks.rs. It calls one tool as a task-declaring
// client of 2026-07-28 and prints, one JSON object a line, what it sees:
//
//   {"event":"call","kind":"task"|"immediate","taskId"?}
//   {"event":"task","status",...}           each task state it observes
//   {"event":"elicitation","message"}       each elicitation it answers
//   {"event":"outcome","status","result"?}  how the task ended
//
// It answers every elicitation with ACTION ("accept" by default), and with
// "cancel" as its action calls tasks/cancel once the task waits for input.
//
//   node mcp_tasks_client.mjs URL TOKEN TOOL ARGS_JSON [ACTION]
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';

const [url, token, tool, argsJson, action = 'accept'] = process.argv.slice(2);
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const headers = { Authorization: `Bearer ${token}` };
const protocolVersion = '2026-07-28';
const clientInfo = { name: 'ext-tasks-host', version: '1' };
const clientCapabilities = { elicitation: { form: {} } };

// The SDK's codecs refuse task traffic of 2026-07-28, so task requests go
// out as plain JSON-RPC over HTTP (the package asks the host for this,
// and hands it the method and params to frame).
let nextId = 0;
async function rawDispatch(message) {
  nextId += 1;
  const request = { jsonrpc: '2.0', id: `raw-${nextId}`, ...message };
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      ...headers,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': protocolVersion,
      'Mcp-Method': request.method,
      // What the request is about: the tool's name, or the task's id.
      ...(request.params?.name ?? request.params?.taskId
        ? { 'Mcp-Name': request.params.name ?? request.params.taskId }
        : {}),
      ...(request.method === 'tools/call' ? paramHeaders(request.params) : {}),
    },
    body: JSON.stringify(request),
  });
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const messages = text.split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trim())
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l));
    return framed(messages.find((m) => m.id === request.id));
  }
  return framed(JSON.parse(text));
}

// The arguments a tool's schema mirrors into headers (`x-mcp-header`, as
// the SDK sends them), from the tools the server listed.
let tools = [];
function paramHeaders({ name, arguments: args = {} }) {
  const schema = tools.find((t) => t.name === name)?.inputSchema?.properties ?? {};
  return Object.fromEntries(Object.entries(schema)
    .filter(([key, p]) => p['x-mcp-header'] && typeof args[key] === 'string')
    .map(([key, p]) => [`Mcp-Param-${p['x-mcp-header']}`, args[key]]));
}

// A JSON-RPC response as the package takes it.
function framed(response) {
  if (response?.error !== undefined) return { kind: 'error', error: response.error };
  return { kind: 'result', result: response?.result };
}

const client = new Client(clientInfo, { capabilities: clientCapabilities, versionNegotiation: { mode: 'auto' } });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
tools = (await client.listTools()).tools;
let cancelling;
const session = createTaskSessionFromClient(client, {
  endpointId: 'clawdis-test',
  rawDispatch,
  v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities },
  onInputRequest: async (request) => {
    say({ event: 'elicitation', kind: request.kind, message: request.params.message });
    return { action: action === 'cancel' ? 'accept' : action };
  },
});
try {
  const execution = await session.callTool(tool, JSON.parse(argsJson));
  say({ event: 'call', kind: execution.kind, taskId: execution.handle?.taskId });
  const { outcome } = await execution.settle({
    onEvent: (event) => {
      if (event.type !== 'task') return;
      const { status, statusMessage, retentionMs, suggestedPollIntervalMs } = event.task;
      say({ event: 'task', status, statusMessage, ttlMs: retentionMs, pollIntervalMs: suggestedPollIntervalMs });
      if (action === 'cancel' && status === 'input_required' && !cancelling) {
        cancelling = execution.cancel();
      }
    },
  });
  await cancelling;
  say({ event: 'outcome', status: outcome.status, result: outcome.result, error: outcome.error?.message });
} finally {
  await session.close();
  await client.close();
}
