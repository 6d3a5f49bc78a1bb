import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBinaryServer, type BinaryServer } from './support/binary-server';
import { startFakeOpenAI, toolCallsThenAnswer } from './fakes/openai';
import { readFrames } from './sse';

// Issue 30's limits through the compiled executable, on default settings unless a test says
// otherwise: what one user may write, create and hand to others. These spawn processes; shared
// machines can be slow, and nothing here asserts on time.
setDefaultTimeout(120_000);

const openai = startFakeOpenAI();
afterAll(() => openai.stop());
const ai = { PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: openai.url, PARLEY_AI_API_KEY: 'sk-test', PARLEY_AI_MODEL: 'small' };

async function withServer(env: Record<string, string>, body: (server: BinaryServer) => Promise<void>) {
  const server = await startBinaryServer(env);
  try {
    await body(server);
  } finally {
    await server.stop();
  }
}

const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any });

/** A canvas widget, made the way widgets are made: the model calls `generate_canvas` in a chat turn. */
async function makeWidget(server: BinaryServer): Promise<string> {
  openai.chatScript = toolCallsThenAnswer([{ id: 'call_1', name: 'generate_canvas', args: { topic: 'Trip', goal: 'Pack', content: '# Plan' } }], 'Made a canvas.');
  const frames = await readFrames(await server.post('chat/stream', { message: 'Plan my trip' }));
  const created = frames.find((f) => f.data.type === 'widget.created');
  expect(created).toBeDefined();
  return created!.data.widgetId as string;
}

describe('the compiled binary: widget threads are bounded', () => {
  test('a 1 MiB message is refused (413 naming PARLEY_WIDGET_MESSAGE_MAX_BYTES); a thread stops at its cap (409); a read answers one page, and the pages hold the whole thread', async () => {
    await withServer({ ...ai, PARLEY_WIDGET_THREAD_MAX_MESSAGES: '70' }, async (server) => {
      const widgetId = await makeWidget(server);
      const { body: opened } = await json(await server.post('widget/getOrCreateThread', { widgetId }));
      const threadId = opened.thread.id as string;

      const huge = await json(await server.post('widget/addThreadMessage', { threadId, data: { text: 'x'.repeat(1024 * 1024 - 100) } }));
      expect(huge.status).toBe(413);
      expect(huge.body.data).toEqual({ reason: 'cap', cap: 'PARLEY_WIDGET_MESSAGE_MAX_BYTES', max: 65536 });

      const sent: string[] = [];
      for (let i = 0; i < 70; i++) {
        const added = await json(await server.post('widget/addThreadMessage', { threadId, data: { n: i, text: 'y'.repeat(50_000) } }));
        expect(added.status).toBe(200);
        sent.push(added.body.id);
      }
      const full = await json(await server.post('widget/addThreadMessage', { threadId, data: { n: 70 } }));
      expect(full.status).toBe(409);
      expect(full.body.data).toEqual({ reason: 'cap', cap: 'PARLEY_WIDGET_THREAD_MAX_MESSAGES', max: 70 });
      expect(full.body.message).toContain('PARLEY_WIDGET_THREAD_MAX_MESSAGES');

      // 3.5 MB of messages; one read is one page: at most 1 MiB of them, the newest, with a cursor.
      const read = await server.post('widget/getOrCreateThread', { widgetId });
      const text = await read.text();
      expect(text.length).toBeLessThan(1.1 * 1024 * 1024);
      const page = JSON.parse(text);
      expect(page.thread.messages.length).toBe(20);
      expect(page.thread.messages.map((m: { id: string }) => m.id)).toEqual(sent.slice(50));
      const seen = page.thread.messages.map((m: { id: string }) => m.id);
      for (let before = page.nextBefore; before; ) {
        const older = await json(await server.post('widget/listThreadMessages', { threadId, before }));
        expect(older.status).toBe(200);
        seen.unshift(...older.body.messages.map((m: { id: string }) => m.id));
        before = older.body.nextBefore;
      }
      expect(seen).toEqual(sent);
    });
  });
});
