/**
 * Issue 18 item 5 against a real llama-server, through the compiled `parley`: a server that
 * refuses tools (no `--jinja`) or images (no `--mmproj`) still answers every turn, and
 * `parley doctor` says what it accepts. Each case runs twice where it matters: with llama-server's
 * `/props` (what Parley reads first) and with `/props` hidden, so the turn meets the real refusal
 * (HTTP 500) and Parley must learn from it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from '../../test/build-binary';
import { startFakeSearxng } from '../../test/fakes/searxng';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import { readEvents, type Parley } from './parley-binary';
import { startParleyFor } from './run-shapes';
import { runShape } from './shapes';
import { forward, startLoopbackProxy, type LoopbackProxy } from './loopback-proxy';
import { CUT_OFF } from '../../src/ai/openai-chat';

// Real processes on a shared 2-core machine; nothing here asserts on time.
setDefaultTimeout(180_000);

const dir = llamaServerDir();
const model = testModelPath();
const searx = startFakeSearxng();
afterAll(() => searx.stop());

/** A 1×1 PNG. */
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const LEFT_OUT = 'An image was left out';

/** In front of llama-server, answering 404 for `/props` as servers other than llama.cpp's do. */
const hideProps = (upstream: string) =>
  startLoopbackProxy((req) => (new URL(req.url).pathname === '/props' ? new Response('not found', { status: 404 }) : forward(upstream, req)));

/** One llama-server, and a parley in front of it: through the rig's proxy (with /props), or with /props hidden. */
function rig(opts: { noJinja?: boolean }) {
  let server: LlamaServer | undefined;
  let withProps: Parley | undefined;
  let withoutProps: Parley | undefined;
  let hider: LoopbackProxy | undefined;
  beforeAll(async () => {
    const bin = await buildBinaryOnce();
    server = await startLlamaServer({ dir, model, contextTokens: 4096, noJinja: opts.noJinja });
    withProps = await startParleyFor({ bin, llamaApiUrl: server.apiUrl, searxngUrl: searx.url });
    hider = hideProps(server.url);
    withoutProps = await startParleyFor({ bin, llamaApiUrl: hider.apiUrl, searxngUrl: searx.url });
  });
  afterAll(async () => {
    await withProps?.stop();
    await withoutProps?.stop();
    hider?.stop();
    await server?.stop();
  });
  return { server: () => server!, withProps: () => withProps!, withoutProps: () => withoutProps! };
}

/** One chat turn read to its end: its events, answer text and conversation. */
async function chatTurn(p: Parley, body: Record<string, unknown>) {
  const res = await p.call('chat/stream', body);
  expect(res.status).toBe(200);
  const events: any[] = [];
  for await (const e of readEvents(res, AbortSignal.timeout(120_000))) {
    events.push(e);
    if (e.type === 'done' || e.type === 'error') break;
  }
  const text = events.filter((e) => e.type === 'text.delta').map((e) => e.delta).join('');
  const last = events.at(-1);
  // The rig cuts every answer at 64 tokens (PARLEY_AI_ANSWER_TOKENS), which Parley ends with
  // the cut-off error after the text (docs/chat.md, "Endings"): that is an answer here.
  const answered = last?.type === 'done' || (last?.type === 'error' && last.message === CUT_OFF && text.trim() !== '');
  return { events, text, last, answered, conversationId: events.find((e) => e.type === 'conversation.created')?.conversationId as string | undefined };
}

/** `parley doctor --json` against the server, its "AI capabilities" check. */
async function doctorCapabilities(bin: string, apiUrl: string) {
  const p = Bun.spawn([bin, 'doctor', '--json', '--data-dir', join(mkdtempSync(join(tmpdir(), 'parley-real-doctor-')), 'data')], {
    env: { PATH: process.env.PATH ?? '', PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: apiUrl, PARLEY_AI_MODEL: 'tiny', PARLEY_RESEARCH_MODEL: 'tiny' },
    stdout: 'pipe',
  });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return (JSON.parse(out).checks as any[]).find((c) => c.name === 'AI capabilities');
}

describe('item 5: llama-server without --jinja (refuses any request with tools)', () => {
  const r = rig({ noJinja: true });
  // Parley meets these on purpose: a missing /props (hidden), then the one refusal it learns from
  // (/props says nothing of tools that Parley trusts: docs/chat.md).
  const learning = /^HTTP (404: not found|500: .*tools param requires --jinja)/;
  for (const [how, p] of [['/props read', () => r.withProps()], ['/props hidden: learned from the refusal', () => r.withoutProps()]] as const) {
    test(`chat and research turns still answer (${how})`, async () => {
      expect(await runShape(p(), 'first turn', learning)).toMatchObject({ ok: true });
      expect(await runShape(p(), 'research')).toMatchObject({ ok: true });
      // Remembered: the next turn answers too, with no refusal at all.
      expect(await runShape(p(), 'first turn')).toMatchObject({ ok: true });
    });
  }
  test('parley doctor says the server refuses tools', async () => {
    const check = await doctorCapabilities(await buildBinaryOnce(), r.server().apiUrl);
    expect(check).toMatchObject({ status: 'warn' });
    expect(check.detail).toContain('tools: refused (HTTP 500: tools param requires --jinja flag)');
    expect(check.fix).toContain('--jinja');
  });
});

describe('item 5: an image to the tiny model (no vision)', () => {
  const r = rig({});
  for (const [how, p] of [['/props read', () => r.withProps()], ['/props hidden: HTTP 500, learned from the refusal', () => r.withoutProps()]] as const) {
    test(`the turn answers without the image and says so; the next text-only turn works (${how})`, async () => {
      const first = await chatTurn(p(), { message: 'What is in this picture?', images: [{ imageUrl: PIXEL, detail: 'low' }] });
      expect({ answered: first.answered, last: first.last }).toMatchObject({ answered: true });
      expect(first.text).toStartWith(`*${LEFT_OUT}`);
      expect(first.text.length).toBeGreaterThan(`*${LEFT_OUT}`.length + 20);
      const next = await chatTurn(p(), { message: 'And then what happened?', conversationId: first.conversationId });
      expect({ answered: next.answered, last: next.last }).toMatchObject({ answered: true });
      expect(next.text.trim()).not.toBe('');
      expect(next.text).not.toContain(LEFT_OUT);
    });
  }
  test('parley doctor says the model takes no images', async () => {
    const check = await doctorCapabilities(await buildBinaryOnce(), r.server().apiUrl);
    expect(check).toMatchObject({ status: 'warn' });
    expect(check.detail).toContain('images: refused (HTTP 500: image input is not supported');
    expect(check.fix).toContain('--mmproj');
  });
});
