/**
 * The real-model suite: the compiled `parley` against a real llama.cpp `llama-server` running the
 * tiny stories260K model, with real chat templates. Not part of the plain `bun test` (bunfig.toml
 * keeps that to test/); run it with scripts/real-models/run.sh, which builds llama-server first.
 * Fakes still cover what a tiny model cannot show (tool calls are scripted by the proxy in
 * tool-call-proxy.ts; the Responses API is fake-only).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { buildBinaryOnce } from '../../test/build-binary';
import { startFakeSearxng } from '../../test/fakes/searxng';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import { readEvents, type Parley } from './parley-binary';
import { startParleyFor } from './run-shapes';
import { runShape, SHAPES, TOOL_ROLE_REFUSED, type ShapeName } from './shapes';
import { knownFailure } from './known-failures';

// Real processes on a shared 2-core machine; nothing here asserts on time.
setDefaultTimeout(180_000);

const dir = llamaServerDir();
const model = testModelPath();
const searx = startFakeSearxng();
afterAll(() => searx.stop());

/** One llama-server with `template` and one parley in front of it, for the tests of a describe block. */
function withTemplate(template: string, reasoning: 'on' | 'off' = 'off'): () => Parley {
  let server: LlamaServer | undefined;
  let parley: Parley | undefined;
  beforeAll(async () => {
    server = await startLlamaServer({ dir, model, contextTokens: 4096, templateFile: join(dir, 'templates', template), reasoning });
    parley = await startParleyFor({ bin: await buildBinaryOnce(), llamaApiUrl: server.apiUrl, searxngUrl: searx.url });
  });
  afterAll(async () => {
    await parley?.stop();
    await server?.stop();
  });
  return () => parley!;
}

/** A shape's test: expected to pass, or — listed in known-failures.ts — expected to fail until its fix lands. */
function shapeTest(template: string, shape: ShapeName, name: string, p: () => Parley): void {
  const known = knownFailure(template, shape);
  (known ? test.failing : test)(known ? `${name} (known failure until ${known.fixedBy}: ${known.reason})` : name, async () => {
    expect(await runShape(p(), shape)).toMatchObject({ ok: true });
  });
}

describe('a ChatML template (Qwen2.5): every request shape Parley makes', () => {
  const template = 'Qwen-Qwen2.5-7B-Instruct.jinja';
  const p = withTemplate(template);
  for (const shape of SHAPES) shapeTest(template, shape, `${shape}: 200 and a streamed answer`, p);
});

describe('issue 18 item 3: requests that strict templates accept', () => {
  describe('Qwen3.5 (one system message, at the beginning)', () => {
    const template = 'Qwen3.5-4B.jinja';
    const p = withTemplate(template);
    shapeTest(template, 'research', 'deep research sends its instructions in the one leading system message', p);
  });
  describe('Mistral-Small-3.2 (roles alternate; tool call ids of nine letters and digits)', () => {
    const template = 'Mistral-Small-3.2-24B-Instruct-2506.jinja';
    const p = withTemplate(template);
    shapeTest(template, 'group', 'a group follow-up after members spoke in a row', p);
    shapeTest(template, 'history tool', 'a history-tool round whose call id the model server chose freely', p);
  });
});

describe('issue 18 item 3: a template without a tool role (Gemma 2: strict user/assistant alternation)', () => {
  const p = withTemplate('google-gemma-2-2b-it.jinja');
  test('a history-tool round answers: the refused tool result goes again as a user turn, and the next round so at once', async () => {
    // The first round carrying a tool's result meets the template's refusal (HTTP 400), which
    // Parley learns from; before the fix the turn ended with that refusal as its error.
    expect(await runShape(p(), 'history tool', TOOL_ROLE_REFUSED)).toMatchObject({ ok: true });
    const refusals = p().upstreamRefusals!();
    expect(refusals.length).toBe(1);
    expect(refusals[0]).toMatch(TOOL_ROLE_REFUSED);
    // Remembered for the process: the next tool round is refused nothing.
    expect(await runShape(p(), 'history tool')).toMatchObject({ ok: true });
    expect(p().upstreamRefusals!().length).toBe(1);
  });
});

describe('issue 18 item 6: honest endings', () => {
  // With thinking on, the tiny model never closes the thinking block: everything it says is
  // reasoning. Before item 6, the turn still ended with `done`, as if answered.
  // (More endings: real-models-endings.test.ts.)
  const p = withTemplate('Qwen3.5-4B.jinja', 'on');
  test('an answer that is all reasoning and no text ends with an error, not done', async () => {
    const res = await p().call('chat/stream', { message: 'Tell me a story.' });
    const events: any[] = [];
    for await (const e of readEvents(res)) {
      events.push(e);
      if (e.type === 'done' || e.type === 'error') break;
    }
    expect(events.some((e) => e.type === 'reasoning_text.delta')).toBe(true);
    expect(events.some((e) => e.type === 'text.delta')).toBe(false);
    expect(events.at(-1)?.type).toBe('error');
  });
});
