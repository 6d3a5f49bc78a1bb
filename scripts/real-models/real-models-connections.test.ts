/**
 * Two chat connections at once, through the compiled `parley`: the real llama-server (the
 * environment's connection, `env-ai`) and a fake OpenAI-compatible server an admin adds over the
 * API (`fake`). One conversation switches model from turn to turn (`chat/stream` with `model`):
 * each answer comes from the server chosen, says which model wrote it, and the history written by
 * the other server goes along. A recording proxy in front of llama-server shows what it was sent.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from '../../test/build-binary';
import { modelList, startFakeOpenAI } from '../../test/fakes/openai';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import { forward, startLoopbackProxy, type LoopbackProxy } from './loopback-proxy';
import { startParley, type Parley } from './parley-binary';
import { turn } from './shapes';

// Real processes on a shared 2-core machine; nothing here asserts on time.
setDefaultTimeout(180_000);

const EMAIL = 'ann@parley.test';
const REAL = 'env-ai/tiny';
const FAKE = 'fake/fake-large';
const fake = startFakeOpenAI({ apiKey: 'sk-fake-key' });
fake.gets['/v1/models'] = modelList(['fake-large', 'fake-small']);
fake.chatScript = () => ({ deltas: [{ content: 'The fake server ' }, { content: 'answers this turn.' }] });

let server: LlamaServer | undefined;
let proxy: LoopbackProxy | undefined;
let parley: Parley | undefined;
/** The chat requests llama-server received, as JSON. */
const realChats: any[] = [];

beforeAll(async () => {
  server = await startLlamaServer({ dir: llamaServerDir(), model: testModelPath(), contextTokens: 2048, maxAnswerTokens: 64 });
  const upstream = server.url;
  proxy = startLoopbackProxy(async (req) => {
    const body = req.method === 'POST' ? await req.text() : undefined;
    if (body && new URL(req.url).pathname === '/v1/chat/completions') realChats.push(JSON.parse(body));
    return forward(upstream, req, body);
  });
  const bin = await buildBinaryOnce();
  const env = {
    PATH: process.env.PATH ?? '',
    PARLEY_DATA_DIR: join(mkdtempSync(join(tmpdir(), 'parley-real-conn-')), 'data'),
    PARLEY_AI_PROVIDER: 'openai-chat',
    PARLEY_AI_BASE_URL: proxy.apiUrl,
    PARLEY_AI_API_KEY: 'none',
    PARLEY_AI_MODEL: 'tiny',
    // The tiny model takes no tools; the fake is asked the same way.
    PARLEY_AI_TOOLS: 'off',
    // As startParley sets it (short answers); the CLI below runs with the server's very settings.
    PARLEY_AI_ANSWER_TOKENS: '64',
  };
  parley = await startParley(bin, env, [EMAIL]);
  // Ann becomes the admin with the CLI, beside the running server, as an operator would.
  const made = Bun.spawnSync([bin, 'user', 'set', '--email', EMAIL, '--admin'], { env });
  if (made.exitCode !== 0) throw new Error(`user set --admin failed: ${made.stderr.toString()}`);
});
afterAll(async () => {
  await parley?.stop();
  proxy?.stop();
  await server?.stop();
  fake.stop();
});

const p = () => parley!;
const fakeChats = () => fake.requests.filter((r) => r.path === 'POST /v1/chat/completions').map((r) => r.body);
const text = (events: any[]) => events.filter((e) => e.type === 'text.delta').map((e) => e.delta).join('');
const modelOf = (events: any[]) => events.find((e) => e.type === 'response.created')?.model;
/** The texts of a request's messages, whatever their form (a string, or parts). */
const said = (body: any): string[] => body.messages.map((m: any) => (typeof m.content === 'string' ? m.content : m.content.map((c: any) => c.text ?? '').join('')));

describe('two chat connections at once: the real llama-server and a fake OpenAI-compatible server', () => {
  test('an admin adds the second connection; the catalogue lists both servers\' models', async () => {
    const added = await p().call('admin/addConnection', { name: 'fake', kind: 'chat', baseUrl: fake.url, credential: 'sk-fake-key', options: { model: 'fake-large', tools: 'off' } });
    expect(added.status).toBe(200);
    const list = await p().json('chat/listModels', {});
    const ids = list.models.map((m: { id: string }) => m.id);
    expect(ids).toContain(REAL);
    expect(ids).toContain(FAKE);
    expect(ids).toContain('fake/fake-small');
    expect(list.models.find((m: { id: string }) => m.id === REAL)).toMatchObject({ connection: 'env-ai', available: true });
    expect(list.models.find((m: { id: string }) => m.id === FAKE)).toMatchObject({ connection: 'fake', available: true });
  });

  test('one conversation switches model mid-way: each turn is answered by the server chosen, with the history the other wrote', async () => {
    const signal = AbortSignal.timeout(150_000);
    // Turn 1: the real model.
    const first = await turn(p(), 'chat/stream', { message: 'Once upon a time there was a cat called Pip.', model: REAL }, signal);
    expect(first.result).toMatchObject({ ok: true });
    expect(modelOf(first.events)).toBe(REAL);
    const realAnswer = text(first.events);
    expect(realAnswer.trim().length).toBeGreaterThan(0);
    const conversationId = first.conversationId!;
    expect(conversationId).toBeString();
    expect(realChats.length).toBe(1);
    expect(realChats[0].model).toBe('tiny');
    const fakeBefore = fakeChats().length;

    // Turn 2: the fake, in the same conversation; it is sent turn 1 whole, the real model's answer included.
    const second = await turn(p(), 'chat/stream', { message: 'What did Pip do next?', model: FAKE, conversationId }, signal);
    expect(second.result).toMatchObject({ ok: true });
    expect(modelOf(second.events)).toBe(FAKE);
    expect(text(second.events)).toBe('The fake server answers this turn.');
    expect(fakeChats().length).toBe(fakeBefore + 1);
    const toFake = fakeChats().at(-1)!;
    expect(toFake.model).toBe('fake-large');
    expect(said(toFake).join('\n')).toContain('Once upon a time there was a cat called Pip.');
    expect(said(toFake).join('\n')).toContain(realAnswer.trim());
    expect(said(toFake).at(-1)).toContain('What did Pip do next?');
    expect(realChats.length).toBe(1); // the real server was not asked

    // Turn 3: back to the real model, which is sent the fake's answer as history.
    const third = await turn(p(), 'chat/stream', { message: 'And how did the story end?', model: REAL, conversationId }, signal);
    expect(third.result).toMatchObject({ ok: true });
    expect(modelOf(third.events)).toBe(REAL);
    expect(text(third.events).trim().length).toBeGreaterThan(0);
    expect(realChats.length).toBe(2);
    const toReal = said(realChats[1]).join('\n');
    expect(toReal).toContain('Once upon a time there was a cat called Pip.');
    expect(toReal).toContain('The fake server answers this turn.');
    expect(toReal).toContain('And how did the story end?');
    expect(fakeChats().length).toBe(fakeBefore + 1); // the fake was not asked

    // The conversation keeps every answer with the model that wrote it.
    const conv = await p().json('chat/getConversation', { conversationId });
    const answers = conv.items.filter((i: any) => i.role === 'assistant');
    expect(answers.map((i: any) => i.parts?.find((x: any) => x.type === 'response.model')?.model)).toEqual([REAL, FAKE, REAL]);
  });

  test('a model neither server offers is a 400 before any stream, and neither server is asked', async () => {
    const before = { real: realChats.length, fake: fakeChats().length };
    const res = await p().call('chat/stream', { message: 'Hello', model: 'fake/not-there' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toBe('Unknown model "fake/not-there": fake does not list it.');
    expect({ real: realChats.length, fake: fakeChats().length }).toEqual(before);
  });
});
