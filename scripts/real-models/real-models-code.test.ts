/**
 * The code interpreter through the compiled `parley` with a real llama-server (docs/code-interpreter.md).
 * The tiny model cannot call tools (the model's README), so its `run_python` call is scripted
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

const CODE_MARKER = 'Sum the prices with Python.';
const CODE = "import csv\nrows = list(csv.DictReader(open('/mnt/data/prices.csv')))\nsum(float(r['price']) for r in rows)";

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
      const wants = last?.role === 'user' && JSON.stringify(last.content).includes(CODE_MARKER) && (body.tools ?? []).some((t: any) => t.function?.name === 'run_python');
      return wants ? scriptedToolCall(body.model, { id: 'scriptedCode1', name: 'run_python', args: { code: CODE } }) : undefined;
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
  test('a scripted run_python sums an attached CSV in the binary\'s sandbox; its output reaches the real model through the chat template', async () => {
    const form = new FormData();
    form.append('file', new Blob(['item,price\napple,1.25\npear,2.50\nplum,3.00\n']), 'prices.csv');
    const res = await fetch(`${parley!.url}/api/files/upload`, { method: 'POST', headers: { 'x-api-key': parley!.keys[0]! }, body: form });
    expect(res.status).toBe(200);
    const csv = (await res.json()) as { id: string };
    const events: any[] = [];
    for await (const e of readEvents(await parley!.call('chat/stream', { message: CODE_MARKER, files: [csv.id] }))) {
      events.push(e);
      if (e.type === 'done' || e.type === 'error') break;
    }
    expect(events.find((e) => e.type === 'code_interpreter.in_progress')).toEqual({ type: 'code_interpreter.in_progress', itemId: 'scriptedCode1', language: 'python', code: CODE });
    expect(events.find((e) => e.type === 'code_interpreter.completed')).toMatchObject({ itemId: 'scriptedCode1', output: '6.75', files: [] });
    expect(events.at(-1).type).toBe('done');
    const [scripted, next] = upstream;
    expect(scripted!.scripted).toBe(true);
    // The round after the call went to llama-server with the tool's output, and it answered.
    const tool = next!.body.messages.find((m: any) => m.role === 'tool');
    expect(String(tool.content)).toContain('6.75');
    expect(next!.status).toBe(200);
  });
});
