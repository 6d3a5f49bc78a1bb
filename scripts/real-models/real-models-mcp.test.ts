/**
 * An MCP tool through the compiled `parley` and a real llama-server: server-everything (from npm,
 * over stdio) added with the binary's own `parley mcp add`, its tools offered to the real model
 * as `mcp__everything__*`. The tiny model cannot call tools (its README), so the call it would
 * make is scripted between Parley and llama-server (as tool-call-proxy.ts does for
 * search_history): Parley calls the MCP server for real, and the next round, carrying the tool's
 * answer, goes through the real chat template to the real model, which answers.
 * Run by scripts/real-models/run.sh; alone:
 *   PARLEY_LLAMA_SERVER_DIR=... node_modules/.bin/bun test ./scripts/real-models/real-models-mcp.test.ts
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from '../../test/build-binary';
import { everythingStdio } from '../../test/support/mcp-servers';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import { forward, startLoopbackProxy, type LoopbackProxy } from './loopback-proxy';
import { readEvents, startParley, type Parley } from './parley-binary';

setDefaultTimeout(180_000);

const MARKER = 'Echo it through MCP.';
const WORDS = 'the picnic is at noon';

let server: LlamaServer | undefined;
let proxy: LoopbackProxy | undefined;
let parley: Parley | undefined;
const upstream: { body: any; scripted: boolean; status?: number }[] = [];

function scriptedEcho(model: string): Response {
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 0, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const call = { index: 0, id: 'scriptedMcp1', type: 'function', function: { name: 'mcp__everything__echo', arguments: JSON.stringify({ message: WORDS }) } };
  return new Response(chunk({ role: 'assistant', content: null, tool_calls: [call] }) + chunk({}, 'tool_calls') + 'data: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } });
}

const wantsScriptedEcho = (body: any) => {
  const last = body.messages?.at(-1);
  return last?.role === 'user' && typeof last.content === 'string' && last.content.includes(MARKER) && (body.tools ?? []).some((t: any) => t.function?.name === 'mcp__everything__echo');
};

beforeAll(async () => {
  const dir = llamaServerDir();
  // server-everything's 13 tools take about 5,000 tokens of schema: room for them beside the turn.
  server = await startLlamaServer({ dir, model: testModelPath(), contextTokens: 16384, templateFile: join(dir, 'templates', 'Qwen-Qwen2.5-7B-Instruct.jinja') });
  proxy = startLoopbackProxy(async (req) => {
    const body = req.method === 'POST' ? await req.text() : undefined;
    if (new URL(req.url).pathname === '/v1/chat/completions' && body) {
      const parsed = JSON.parse(body);
      const scripted = wantsScriptedEcho(parsed);
      upstream.push({ body: parsed, scripted });
      if (scripted) return scriptedEcho(parsed.model);
      // Stop the tiny model at its first comma or full stop, so the turn ends with `done` (real-models-files.test.ts).
      const res = await forward(server!.url, req, JSON.stringify({ ...parsed, stop: ['.', ',', '!', '?', '\n'] }));
      upstream.at(-1)!.status = res.status;
      return res;
    }
    return forward(server!.url, req, body);
  });
  const bin = await buildBinaryOnce();
  const dataDir = join(mkdtempSync(join(tmpdir(), 'parley-real-mcp-')), 'data');
  const [command, ...args] = everythingStdio();
  const added = Bun.spawnSync([bin, 'mcp', 'add', 'everything', '--command', command!, ...args.flatMap((a) => ['--arg', a])], { env: { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: dataDir } });
  if (added.exitCode !== 0) throw new Error(`parley mcp add failed: ${added.stderr.toString()}`);
  parley = await startParley(bin, { PARLEY_DATA_DIR: dataDir, PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: proxy.apiUrl, PARLEY_AI_API_KEY: 'none', PARLEY_AI_MODEL: 'tiny' });
});
afterAll(async () => {
  await parley?.stop();
  proxy?.stop();
  await server?.stop();
});

describe('an MCP call through the compiled binary against a real model', () => {
  test('the MCP tools reach the real model; a scripted call runs on the real server; its answer reaches the real model through the template', async () => {
    const events: any[] = [];
    for await (const e of readEvents(await parley!.call('chat/stream', { message: `${MARKER} When is the picnic?` }))) {
      events.push(e);
      if (e.type === 'done' || e.type === 'error') break;
    }
    const at = upstream.findIndex((u) => u.scripted);
    expect(at, JSON.stringify(upstream.map((u) => ({ tools: (u.body.tools ?? []).map((t: any) => t.function?.name), last: u.body.messages?.at(-1)?.content })))).toBeGreaterThanOrEqual(0);
    const [scripted, next] = upstream.slice(at);
    expect((scripted!.body.tools ?? []).map((t: any) => t.function?.name)).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum']));
    expect(scripted!.scripted).toBe(true);
    expect(events.find((e) => e.type === 'mcp_call.in_progress')).toEqual({ type: 'mcp_call.in_progress', itemId: 'scriptedMcp1', server: 'everything', tool: 'echo', arguments: { message: WORDS } });
    expect(events.find((e) => e.type === 'mcp_call.completed')).toEqual({ type: 'mcp_call.completed', itemId: 'scriptedMcp1', content: [{ type: 'text', text: `Echo: ${WORDS}` }] });
    expect(next?.scripted).toBe(false);
    expect(next?.status).toBe(200);
    expect(next!.body.messages.find((m: any) => m.role === 'tool')?.content).toBe(`Echo: ${WORDS}`);
    expect(events.at(-1), JSON.stringify(events.at(-1))).toMatchObject({ type: 'done' });
    const text = events.filter((e) => e.type === 'text.delta').map((e) => e.delta).join('');
    console.log(`real model after the scripted MCP call: answered ${JSON.stringify(text.slice(0, 160))}`);
  });
});
