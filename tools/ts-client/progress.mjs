// Calls `test_tool_with_progress` on a stdio server N times with the official MCP
// TypeScript SDK client and prints one JSON line: how many progress notifications each
// call saw (the tool sends 3) and the tool's text.
//
//   node progress.mjs CALLS COMMAND [ARG]...
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [calls, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: 'ignore' });
const client = new Client({ name: 'ferry-interop', version: '1.0.0' });
await client.connect(transport);
const seen = [];
let text = '';
for (let i = 0; i < Number(calls); i++) {
  let count = 0;
  const result = await client.callTool(
    { name: 'test_tool_with_progress', arguments: {} },
    { onprogress: () => { count += 1; } },
  );
  text = result.content?.[0]?.text ?? '';
  seen.push(count);
}
await client.close();
console.log(JSON.stringify({ seen, text }));
