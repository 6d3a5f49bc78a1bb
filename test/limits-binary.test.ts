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

describe('the compiled binary: what a user creates is bounded', () => {
  test('150 quick calls each to createGroupChat, createApiKey and createInvite: the caps hold (409 naming them), the rate limit answers 429, never a 5xx', async () => {
    // Default settings, but the write bucket refills per hour instead of per minute (the same 120
    // at once): what a slow machine takes for 150 calls does not refill it.
    await withServer({ PARLEY_RATE_LIMIT_WRITE: '120/hour' }, async (server) => {
      /** `n` calls, ten at a time: the statuses, and the caps the 409s named. */
      const flood = async (path: string, input: (i: number) => unknown, n = 150) => {
        const statuses: number[] = [];
        const caps = new Set<string>();
        for (let i = 0; i < n; i += 10)
          for (const r of await Promise.all(Array.from({ length: 10 }, (_, j) => server.post(path, input(i + j)).then(json)))) {
            statuses.push(r.status);
            if (r.status === 409) caps.add(`${r.body.data.cap} ${r.body.message.includes(r.body.data.cap)}`);
          }
        const tally = Object.fromEntries([200, 409, 429].map((s) => [s, statuses.filter((x) => x === s).length]));
        return { tally, others: statuses.filter((s) => ![200, 409, 429].includes(s)), caps: [...caps] };
      };

      /** `ok` made, the rest refused by the cap or the rate limit (120 a bucket), nothing else. */
      const expectBounded = (r: Awaited<ReturnType<typeof flood>>, ok: number, cap: string) => {
        expect({ ok: r.tally[200], refused: r.tally[409]! + r.tally[429]!, others: r.others, caps: r.caps }).toEqual({ ok, refused: 150 - ok, others: [], caps: [`${cap} true`] });
        // The bucket holds 120: the calls past it are 429 (it refills 2 an hour here).
        expect(r.tally[429]).toBeGreaterThanOrEqual(29);
      };
      // 100 groups at most (PARLEY_GROUPS_MAX_PER_USER).
      expectBounded(await flood('groupChat/createGroupChat', (i) => ({ name: `g${i}` })), 100, 'PARLEY_GROUPS_MAX_PER_USER');
      // 50 keys not revoked (the CLI made the first).
      expectBounded(await flood('auth/createApiKey', (i) => ({ name: `k${i}` })), 49, 'PARLEY_API_KEYS_MAX_PER_USER');
      const { body: groupList } = await json(await server.post('groupChat/listGroupChats', {}));
      const groupChatId = groupList.groupChats[0].id;
      expectBounded(await flood('groupChat/createInvite', () => ({ groupChatId })), 50, 'PARLEY_GROUP_INVITES_MAX_PER_USER');
    });
  });
});

describe('the compiled binary: sharing a conversation', () => {
  test('an address with an account and one without get the same answer; the recipient sees an offer, no access, until they accept', async () => {
    const server = await startBinaryServer(ai, ['bob@example.org']);
    try {
      openai.chatScript = () => ({ deltas: [{ content: 'Lisbon, then.' }] });
      const frames = await readFrames(await server.post('chat/stream', { message: 'Where in May?' }));
      const conversationId = frames.find((f) => f.data.type === 'conversation.created')!.data.conversationId as string;

      const [toBob, toNobody] = [await server.post('chat/shareConversation', { conversationId, email: 'bob@example.org' }), await server.post('chat/shareConversation', { conversationId, email: 'nobody@example.org' })];
      const answer = async (r: Response) => ({ status: r.status, type: r.headers.get('content-type'), body: await r.text() });
      expect(await answer(toNobody)).toEqual(await answer(toBob));
      expect(toBob.status).toBe(200);

      const bob = (path: string, body: unknown) => server.postAs('bob@example.org', path, body).then(json);
      expect((await bob('chat/listConversations', {})).body.conversations).toEqual([]);
      expect((await bob('chat/getConversation', { conversationId })).status).toBe(403);
      const { body: offers } = await bob('chat/listPendingShares', {});
      expect(offers.shares).toMatchObject([{ conversationId, sharedBy: { email: 'ann@example.org' } }]);
      expect((await bob('chat/acceptShare', { shareId: offers.shares[0].shareId })).body).toEqual({ success: true, conversationId });
      expect((await bob('chat/listConversations', {})).body.conversations.map((c: { id: string }) => c.id)).toEqual([conversationId]);
      expect((await bob('chat/getConversation', { conversationId })).status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});
