/**
 * The code interpreter through the compiled `parley` with a real llama-server (docs/code-interpreter.md).
 * The tiny model cannot call tools (the model's README), so its `run_python` (and `run_javascript`) call is scripted
 * between Parley and llama-server (as scripted-read.ts does for read_file): Parley runs the code
 * for real in a sandbox child of the binary, summing a CSV attached to the chat, and the next
 * round, carrying the tool's output, goes through the real chat template to the real model.
 * Run by scripts/real-models/run.sh; alone:
 *   PARLEY_LLAMA_SERVER_DIR=... node_modules/.bin/bun test ./scripts/real-models/real-models-code.test.ts
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { buildBinaryOnce } from '../../test/build-binary';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import type { LoopbackProxy } from './loopback-proxy';
import { readEvents, startParley, type Parley } from './parley-binary';
import { scriptedToolCall, startScriptingProxy, type UpstreamCall } from './scripted-read';

setDefaultTimeout(240_000);

/** What the user asks, the tool the scripted call names, and its code: one per language. */
const CALLS = {
  python: { marker: 'Sum the prices with Python.', tool: 'run_python', code: "import csv\nrows = list(csv.DictReader(open('/mnt/data/prices.csv')))\nsum(float(r['price']) for r in rows)" },
  javascript: {
    marker: 'Sum the prices with JavaScript.',
    tool: 'run_javascript',
    code: "fs.readFile('/mnt/data/prices.csv').trim().split('\\n').slice(1).reduce((n, l) => n + Number(l.split(',')[1]), 0)",
  },
} as const;

let server: LlamaServer | undefined;
let proxy: LoopbackProxy | undefined;
let parley: Parley | undefined;
const upstream: UpstreamCall[] = [];

beforeAll(async () => {
  const dir = llamaServerDir();
  server = await startLlamaServer({ dir, model: testModelPath(), contextTokens: 4096, templateFile: join(dir, 'templates', 'Qwen-Qwen2.5-7B-Instruct.jinja') });
  proxy = startScriptingProxy(
    () => server!.url,
    (body) => {
      const last = body.messages?.at(-1);
      const call = Object.values(CALLS).find((c) => last?.role === 'user' && JSON.stringify(last.content).includes(c.marker) && (body.tools ?? []).some((t: any) => t.function?.name === c.tool));
      return call ? scriptedToolCall(body.model, { id: `scripted_${call.tool}`, name: call.tool, args: { code: call.code } }) : undefined;
    },
    upstream,
  );
  parley = await startParley(await buildBinaryOnce(), {
    PARLEY_AI_PROVIDER: 'openai-chat',
    PARLEY_AI_BASE_URL: proxy.apiUrl,
    PARLEY_AI_API_KEY: 'none',
    PARLEY_AI_MODEL: 'tiny',
    PARLEY_CODE_INTERPRETER: 'true',
  });
});
afterAll(async () => {
  await parley?.stop();
  proxy?.stop();
  await server?.stop();
});

describe('the code interpreter with a real model', () => {
  test.each(['python', 'javascript'] as const)('a scripted call in %s sums an attached CSV in the binary\'s sandbox; its output reaches the real model through the chat template', async (language) => {
    const { marker, tool, code } = CALLS[language];
    upstream.length = 0;
    const form = new FormData();
    form.append('file', new Blob(['item,price\napple,1.25\npear,2.50\nplum,3.00\n']), 'prices.csv');
    const res = await fetch(`${parley!.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': parley!.keys[0]! }, body: form });
    expect(res.status).toBe(200);
    const csv = (await res.json()) as { id: string };
    const events: any[] = [];
    for await (const e of readEvents(await parley!.call('chat/stream', { message: marker, files: [csv.id] }))) {
      events.push(e);
      if (e.type === 'done' || e.type === 'error') break;
    }
    expect(events.find((e) => e.type === 'code_interpreter.in_progress')).toEqual({ type: 'code_interpreter.in_progress', itemId: `scripted_${tool}`, language, code });
    expect(events.find((e) => e.type === 'code_interpreter.completed')).toMatchObject({ itemId: `scripted_${tool}`, output: '6.75', files: [] });
    expect(events.at(-1).type).toBe('done');
    const [scripted, next] = upstream;
    expect(scripted!.scripted).toBe(true);
    // The round after the call went to llama-server with the tool's output, and it answered.
    const toolMessage = next!.body.messages.find((m: any) => m.role === 'tool');
    expect(String(toolMessage.content)).toContain('6.75');
    expect(next!.status).toBe(200);
  });
});
