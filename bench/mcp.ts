/**
 * An MCP tool call through Parley against the same call made directly with the SDK, on the same
 * server in the same run (server-everything over streamable HTTP on loopback, and over stdio):
 *
 * - direct: one `Client` of `@modelcontextprotocol/client`, connected once, `callTool('echo')`.
 * - Parley: the tool as a turn runs it (`mcp__everything__echo`'s `run`: the pool, the breaker,
 *   the guarded and size-capped fetch, the call, the result mapped and cut, the events emitted),
 *   on the pooled connection of (server, user).
 *
 * The two alternate call by call so the machine's noise falls on both alike; p50 and p95 of each,
 * and the overhead at p50 (target: at most 2 ms).
 *
 *   node_modules/.bin/bun run bench/mcp.ts [calls]
 */
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createTestContext } from '../test/helpers';
import { everythingStdio, startEverythingHttp } from '../test/support/mcp-servers';
import { addMcpServer } from '../src/mcp/mcp-server.service';
import { mcpToolSource } from '../src/mcp/mcp.tools';

const CALLS = Number(process.argv[2] ?? 400);
const WARM = 30;

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function measure(label: string, transport: () => Transport, add: Parameters<typeof addMcpServer>[2]) {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
  const ann = ctx.users[0]!;
  await addMcpServer(ctx.deps, { kind: 'cli' }, add);
  // The tool as the registry hands it to a turn (src/tools/).
  const turn = { deps: ctx.deps, kind: 'chat', user: { id: ann.user.id, subscriptionTier: '', enableMemories: false }, conversationId: 'bench', responseId: 'bench', provider: 'openai-chat' } as const;
  const tool = (await mcpToolSource.tools(turn)).find((t) => t.name === `mcp__${add.name}__echo`)!;
  const direct = new Client({ name: 'bench', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await direct.connect(transport());
  const args = { message: 'the same words, every call' };
  const viaParley = async (i: number) => {
    const t0 = performance.now();
    await tool.run(args, () => undefined, `c${i}`, `bench:${i}`);
    return performance.now() - t0;
  };
  const viaSdk = async () => {
    const t0 = performance.now();
    await direct.callTool({ name: 'echo', arguments: args });
    return performance.now() - t0;
  };
  for (let i = 0; i < WARM; i++) {
    await viaParley(-i);
    await viaSdk();
  }
  const parley: number[] = [];
  const sdk: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    if (i % 2) {
      parley.push(await viaParley(i));
      sdk.push(await viaSdk());
    } else {
      sdk.push(await viaSdk());
      parley.push(await viaParley(i));
    }
  }
  await direct.close();
  await ctx.deps.mcp.close();
  const row = {
    transport: label,
    calls: CALLS,
    sdkP50: +pct(sdk, 50).toFixed(3),
    parleyP50: +pct(parley, 50).toFixed(3),
    overheadP50Ms: +(pct(parley, 50) - pct(sdk, 50)).toFixed(3),
    ratioP50: +(pct(parley, 50) / pct(sdk, 50)).toFixed(2),
    sdkP95: +pct(sdk, 95).toFixed(3),
    parleyP95: +pct(parley, 95).toFixed(3),
  };
  console.log(JSON.stringify(row));
  return row;
}

const http = await startEverythingHttp('streamableHttp');
try {
  await measure('streamable-http', () => new StreamableHTTPClientTransport(new URL(http.url)), { name: 'everything', url: http.url });
} finally {
  http.stop();
}
const [command, ...args] = everythingStdio();
await measure('stdio', () => new StdioClientTransport({ command: command!, args }), { name: 'everything', transport: 'stdio', command: everythingStdio() });
process.exit(0);
