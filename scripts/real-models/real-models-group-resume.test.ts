/**
 * Issue 18 item 7 through the compiled `parley` against a real llama-server: a member whose group
 * stream drops in the middle of the assistant's answer reconnects with `Last-Event-ID` and gets
 * every delta once, in order (docs/realtime.md, "Resume mid-answer"). A proxy slows the model's
 * stream so that the reconnect surely falls inside the answer.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { buildBinaryOnce } from '../../test/build-binary';
import { llamaServerDir, startLlamaServer, testModelPath, type LlamaServer } from './llama-server';
import { startParley, type Parley } from './parley-binary';
import { oneEventEvery, startSseProxy, type SseProxy } from './sse-proxy';

setDefaultTimeout(90_000);

/** Milliseconds the proxy holds each event of a streamed answer. */
const EVENT_DELAY_MS = 40;

let llama: LlamaServer | undefined;
let parley: Parley | undefined;
let proxy: SseProxy | undefined;

beforeAll(async () => {
  llama = await startLlamaServer({ dir: llamaServerDir(), model: testModelPath(), contextTokens: 4096, maxAnswerTokens: 48 });
  proxy = startSseProxy(llama.apiUrl, oneEventEvery(EVENT_DELAY_MS));
  parley = await startParley(
    await buildBinaryOnce(),
    { PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: proxy.apiUrl, PARLEY_AI_MODEL: 'tiny' },
    ['ann@parley.test', 'bob@parley.test'],
  );
});

afterAll(async () => {
  await parley?.stop();
  proxy?.stop();
  await llama?.stop();
});

interface Frame {
  id?: string;
  data: any;
}

/** The frames of a group stream (id and data), as an EventSource reads them. */
async function* frames(res: Response, signal: AbortSignal): AsyncGenerator<Frame> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  signal.addEventListener('abort', () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    for (let at = buf.indexOf('\n\n'); at >= 0; at = buf.indexOf('\n\n')) {
      const lines = buf.slice(0, at).split('\n');
      buf = buf.slice(at + 2);
      const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      if (data) yield { id: lines.find((l) => l.startsWith('id:'))?.slice(3).trim(), data: JSON.parse(data) };
    }
  }
}

const subscribe = (groupChatId: string, key: string, signal: AbortSignal, lastEventId?: string) =>
  fetch(`${parley!.url}/api/groupChat/subscribeToGroup`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    body: JSON.stringify({ groupChatId }),
    signal,
  });

test('group resume mid-answer: the deltas in between are replayed, every delta once and in order', async () => {
  const p = parley!;
  const [ann, bob] = p.keys as [string, string];
  const group = await p.json('groupChat/createGroupChat', { name: 'Stories' }, ann);
  const { code } = await p.json('groupChat/createInvite', { groupChatId: group.id }, ann);
  await p.json('groupChat/joinGroup', { code }, bob);

  const firstAc = new AbortController();
  const first = frames(await subscribe(group.id, bob, firstAc.signal), firstAc.signal);
  await p.json('groupChat/sendGroupMessage', { groupChatId: group.id, message: '@ai tell us a story' }, ann);
  const before: Frame[] = [];
  for await (const f of first) {
    before.push(f);
    if (before.filter((x) => x.data.type === 'assistant.text.delta').length === 3) break;
  }
  firstAc.abort();
  // The model writes on while Bob is away.
  await Bun.sleep(5 * EVENT_DELAY_MS);

  const againAc = new AbortController();
  const after: Frame[] = [];
  for await (const f of frames(await subscribe(group.id, bob, againAc.signal, before.at(-1)!.id), againAc.signal)) {
    after.push(f);
    if (f.data.type === 'assistant.failed' || (f.data.type === 'message.created' && f.data.message.role === 'assistant')) break;
  }
  againAc.abort();

  const answer = after.at(-1)!.data;
  expect(answer.type).toBe('message.created');
  const deltas = [...before, ...after].filter((f) => f.data.type === 'assistant.text.delta');
  // Every delta once, in order: together they are the stored answer, and their ids never repeat.
  expect(deltas.map((f) => f.data.delta).join('')).toBe(answer.message.content);
  const ids = [...before, ...after].map((f) => f.id);
  expect(new Set(ids).size).toBe(ids.length);
  // The reconnect fell inside the answer: some deltas came only from the replay.
  expect(after.filter((f) => f.data.type === 'assistant.text.delta').length).toBeGreaterThan(0);
});
