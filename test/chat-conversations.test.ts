import { describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createTestContext, onPg, SPEC_ERRORS } from './helpers';
import { addWriter, appendItem, createConversation, listItems } from '../src/chat/conversation.store';
import { createResponse, setResponseStatus } from '../src/chat/response.store';
import { pruneExpired } from '../src/tasks/prune-expired';
import { createWidget } from '../src/widgets/widget.store';
import { searchHistory } from '../src/chat/history.store';

const users = [{ email: 'ann@example.org' }, { email: 'bob@example.org' }, { email: 'cy@example.org' }];

async function seed() {
  const ctx = await createTestContext({ users });
  const [ann, bob, cy] = ctx.users as [any, any, any];
  const c = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Plans' }));
  const items = [];
  for (const content of ['one', 'two', 'three', 'four']) items.push(await ctx.store.read((tx) => appendItem(tx, { conversationId: c.id, role: 'user', content, authorId: ann.user.id })));
  await ctx.store.read((tx) => addWriter(tx, c.id, bob.user.id));
  return { ctx, ann, bob, cy, c, items };
}

describe('conversation operations', () => {
  test('truncateConversationFromItem: deletes the item and every later one; reasons otherwise', async () => {
    const { ctx, bob, cy, c, items } = await seed();
    const other = await ctx.store.read((tx) => createConversation(tx, { ownerId: cy.user.id }));
    const foreignItem = await ctx.store.read((tx) => appendItem(tx, { conversationId: other.id, role: 'user', content: 'x' }));
    expect((await ctx.json('chat/truncateConversationFromItem', { conversationId: c.id, fromItemId: foreignItem.id }, bob)).body).toEqual({
      success: false, deletedCount: 0, reason: 'ITEM_NOT_FOUND', failedItemId: foreignItem.id,
    });
    expect((await ctx.json('chat/truncateConversationFromItem', { conversationId: c.id, fromItemId: items[1]!.id }, cy)).body).toEqual({
      success: false, deletedCount: 0, reason: 'CONVERSATION_NOT_WRITABLE',
    });
    expect((await ctx.json('chat/truncateConversationFromItem', { conversationId: 'nope', fromItemId: items[1]!.id }, bob)).body.reason).toBe('CONVERSATION_NOT_WRITABLE');
    const ok = await ctx.json('chat/truncateConversationFromItem', { conversationId: c.id, fromItemId: items[1]!.id }, bob);
    expect(ok.body).toEqual({ success: true, deletedCount: 3 });
    expect((await ctx.store.read((tx) => listItems(tx, c.id))).map((i) => i.content)).toEqual(['one']);
    expect((await ctx.json('chat/truncateConversationFromItem', { conversationId: c.id, fromItemId: items[0]!.id })).body).toEqual(SPEC_ERRORS[401]);
  });

  test('deleteConversation: owner only, 404 unknown, everything attached goes', async () => {
    const { ctx, ann, bob, c } = await seed();
    const r = await ctx.store.read((tx) => createResponse(tx, { conversationId: c.id, userId: ann.user.id, kind: 'chat', model: 'm', input: { message: 'x' }, status: 'completed' }));
    const w = ctx.deps.events.writer(r.id, 0);
    w.emit({ type: 'done' });
    await w.idle();
    await ctx.store.read((tx) => createWidget(tx, { conversationId: c.id, responseId: r.id, widgetType: 'canvas' }, Date.now()));
    expect((await ctx.json('chat/deleteConversation', { conversationId: c.id }, bob)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('chat/deleteConversation', { conversationId: 'nope' }, ann)).body).toEqual(SPEC_ERRORS[404]);
    expect((await ctx.json('chat/deleteConversation', { conversationId: c.id }, ann)).body).toEqual({ success: true });
    for (const table of ['conversations', 'conversation_items', 'conversation_writers', 'responses', 'response_events', 'widgets'])
      expect({ table, n: await ctx.count(table) }).toEqual({ table, n: 0 });
    expect((await ctx.json('chat/deleteConversation', { conversationId: c.id }, ann)).status).toBe(404);
  });

  test('canWriteConversation: owner and writers true; others and unknown false', async () => {
    const { ctx, ann, bob, cy, c } = await seed();
    for (const [u, id, want] of [[ann, c.id, true], [bob, c.id, true], [cy, c.id, false], [ann, 'nope', false]] as const)
      expect((await ctx.json('chat/canWriteConversation', { conversationId: id }, u)).body).toEqual({ canWrite: want });
  });

  test('setConversationStudyMode: deprecated header; writers only', async () => {
    const { ctx, ann, cy, c } = await seed();
    const { status, body, res } = await ctx.json('chat/setConversationStudyMode', { conversationId: c.id, studyMode: true }, ann);
    expect(status).toBe(200);
    expect(body).toEqual({ success: true });
    expect(res.headers.get('deprecation')).toBe('true');
    expect((await ctx.json('chat/getConversation', { conversationId: c.id }, ann)).body.conversation.studyMode).toBe(true);
    expect((await ctx.json('chat/setConversationStudyMode', { conversationId: c.id, studyMode: false }, cy)).body).toEqual({ success: false });
    expect((await ctx.json('chat/setConversationStudyMode', { conversationId: 'nope', studyMode: false }, ann)).body).toEqual({ success: false });
  });

  test('list, get, rename, share, branch', async () => {
    const { ctx, ann, bob, cy, c, items } = await seed();
    const mine = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Later' }, Date.now() + 1000));
    const page1 = await ctx.json('chat/listConversations', { limit: 1 }, ann);
    expect(page1.body.conversations.map((x: any) => x.id)).toEqual([mine.id]);
    const page2 = await ctx.json('chat/listConversations', { limit: 1, cursor: page1.body.nextCursor }, ann);
    expect(page2.body.conversations.map((x: any) => x.id)).toEqual([c.id]);
    expect(page2.body.nextCursor).toBeNull();
    // A cursor it did not give out is refused, not read as "from the start".
    for (const cursor of ['not-a-cursor', ...['x:y', '1:', ' :x', '0x10:a'].map((raw) => Buffer.from(raw).toString('base64url'))]) {
      const bad = await ctx.json('chat/listConversations', { limit: 1, cursor }, ann);
      expect({ cursor, status: bad.status, path: bad.body.data?.issues?.[0]?.path }).toEqual({ cursor, status: 400, path: ['cursor'] });
    }
    expect((await ctx.json('chat/listConversations', { limit: 1, cursor: '' }, ann)).body.conversations.map((x: any) => x.id)).toEqual([mine.id]);
    expect((await ctx.json('chat/listConversations', {}, bob)).body.conversations.map((x: any) => x.id)).toEqual([c.id]);
    expect((await ctx.json('chat/listConversations', {}, cy)).body.conversations).toEqual([]);

    const got = await ctx.json('chat/getConversation', { conversationId: c.id }, bob);
    expect(got.body.conversation).toMatchObject({ id: c.id, title: 'Plans', ownerId: ann.user.id, studyMode: false, branchOf: null });
    expect(got.body.items.map((i: any) => i.content)).toEqual(['one', 'two', 'three', 'four']);
    expect(got.body.items[0].createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect((await ctx.json('chat/getConversation', { conversationId: c.id }, cy)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('chat/getConversation', { conversationId: 'nope' }, cy)).body).toEqual(SPEC_ERRORS[404]);

    expect((await ctx.json('chat/renameConversation', { conversationId: c.id, title: ' Trip ' }, bob)).body).toEqual({ success: true });
    expect((await ctx.json('chat/getConversation', { conversationId: c.id }, ann)).body.conversation.title).toBe('Trip');
    expect((await ctx.json('chat/renameConversation', { conversationId: c.id, title: 'x' }, cy)).status).toBe(403);
    expect((await ctx.json('chat/renameConversation', { conversationId: 'nope', title: 'x' }, cy)).status).toBe(404);

    expect((await ctx.json('chat/shareConversation', { conversationId: c.id, email: 'cy@example.org' }, bob)).body).toEqual(SPEC_ERRORS[403]);
    // No account with that address: the same answer as for one (test/shares.test.ts).
    expect((await ctx.json('chat/shareConversation', { conversationId: c.id, email: 'nobody@example.org' }, ann)).body).toEqual({ success: true });
    expect((await ctx.json('chat/shareConversation', { conversationId: 'nope', email: 'cy@example.org' }, ann)).status).toBe(404);
    expect((await ctx.json('chat/shareConversation', { conversationId: c.id, email: 'CY@example.org' }, ann)).body).toEqual({ success: true });
    // An offer until accepted.
    expect((await ctx.json('chat/canWriteConversation', { conversationId: c.id }, cy)).body).toEqual({ canWrite: false });
    const [offer] = (await ctx.json('chat/listPendingShares', {}, cy)).body.shares;
    expect((await ctx.json('chat/acceptShare', { shareId: offer.shareId }, cy)).body).toEqual({ success: true, conversationId: c.id });
    expect((await ctx.json('chat/canWriteConversation', { conversationId: c.id }, cy)).body).toEqual({ canWrite: true });

    const br = await ctx.json('chat/branchConversation', { conversationId: c.id, fromItemId: items[1]!.id }, cy);
    expect(br.body.conversation).toMatchObject({ ownerId: cy.user.id, branchOf: { conversationId: c.id, itemId: items[1]!.id } });
    expect((await ctx.store.read((tx) => listItems(tx, br.body.conversation.id))).map((i) => i.content)).toEqual(['one', 'two']);
    expect((await ctx.json('chat/branchConversation', { conversationId: c.id, fromItemId: 'nope' }, cy)).status).toBe(404);
    // Deleting the parent removes the branch record, not the branch.
    await ctx.json('chat/deleteConversation', { conversationId: c.id }, ann);
    expect((await ctx.json('chat/getConversation', { conversationId: br.body.conversation.id }, cy)).body.conversation.branchOf).toBeNull();
  });

  test("history search (FTS5; a tsvector on PostgreSQL) sees only the user's own conversations and follows edits", async () => {
    const { ctx, ann, cy, c, items } = await seed();
    const theirs = await ctx.store.read((tx) => createConversation(tx, { ownerId: cy.user.id }));
    await ctx.store.read((tx) => appendItem(tx, { conversationId: theirs.id, role: 'user', content: 'three secrets' }));
    expect((await ctx.store.read((tx) => searchHistory(tx, { userId: ann.user.id, query: 'three' }))).map((h) => h.text)).toEqual(['three']);
    expect(await ctx.store.read((tx) => searchHistory(tx, { userId: ann.user.id, query: 'three', excludeConversationId: c.id }))).toEqual([]);
    expect(await ctx.store.read((tx) => searchHistory(tx, { userId: ann.user.id, query: '"; DROP -- *' }))).toEqual([]);
    await ctx.query(sql`DELETE FROM conversation_items WHERE id = ${items[2]!.id}`);
    expect(await ctx.store.read((tx) => searchHistory(tx, { userId: ann.user.id, query: 'three' }))).toEqual([]);
  });

  test("a group chat's messages stay out of everyone's history search, its creator's too; a branch of it is its owner's own", async () => {
    const { ctx, ann, bob } = await seed();
    const group = (await ctx.json('groupChat/createGroupChat', { name: 'Trip' }, ann)).body;
    const { code } = (await ctx.json('groupChat/createInvite', { groupChatId: group.id }, ann)).body;
    expect((await ctx.json('groupChat/joinGroup', { code }, bob)).status).toBe(200);
    await ctx.json('groupChat/sendGroupMessage', { groupChatId: group.id, message: 'zanzibar flights are cheap' }, bob);
    const mine = await ctx.json('groupChat/sendGroupMessage', { groupChatId: group.id, message: 'zanzibar it is' }, ann);
    expect(mine.status).toBe(200);
    for (const who of [ann, bob]) expect(await ctx.store.read((tx) => searchHistory(tx, { userId: who.user.id, query: 'zanzibar' }))).toEqual([]);
    // SQLite's FTS5 index, looked at directly (PostgreSQL's is a column of the items).
    const fts = (term: string) => onPg || ctx.db.$client.query(`SELECT count(*) AS n FROM conversation_items_fts WHERE conversation_items_fts MATCH ?`).get(term);
    if (!onPg) expect(fts('zanzibar')).toEqual({ n: 0 });
    // Branching it makes a conversation of the brancher's own: that one is searchable.
    const br = await ctx.json('chat/branchConversation', { conversationId: group.conversationId, fromItemId: mine.body.id }, bob);
    expect(br.status).toBe(200);
    expect((await ctx.store.read((tx) => searchHistory(tx, { userId: bob.user.id, query: 'zanzibar' }))).map((h) => h.conversationId)).toEqual([br.body.conversation.id, br.body.conversation.id]);
    expect(await ctx.store.read((tx) => searchHistory(tx, { userId: ann.user.id, query: 'zanzibar' }))).toEqual([]);
    // Deleting the group removes its items without touching the index (they were never in it).
    expect((await ctx.json('groupChat/deleteGroupChat', { groupChatId: group.id }, ann)).status).toBe(200);
    if (!onPg) {
      expect(fts('zanzibar')).toEqual({ n: 2 });
      ctx.db.$client.run("INSERT INTO conversation_items_fts(conversation_items_fts, rank) VALUES ('integrity-check', 1)");
    }
  });

  test('events of responses finished longer ago than the retention are pruned, others kept; tool outputs go when a response finishes', async () => {
    const { ctx, ann, c } = await seed();
    const DAY = 24 * 60 * 60 * 1000;
    const outputsLeft = async () => (await ctx.query<{ id: string }>(sql`SELECT response_id AS id FROM response_tool_outputs`)).map((r) => r.id);
    const mk = async (status: 'completed' | 'in_progress', finishedAt: number) => {
      const r = await ctx.store.read((tx) => createResponse(tx, { conversationId: c.id, userId: ann.user.id, kind: 'chat', model: 'm', input: { message: 'x' } }));
      const w = ctx.deps.events.writer(r.id, 0);
      w.emit({ type: 'text.delta', delta: 'a' });
      w.recordToolOutput({ upstreamId: 'resp_1', callId: 'call_1', output: 'a tool said this' });
      await w.flush();
      expect(await outputsLeft()).toContain(r.id);
      await ctx.store.write((tx) => setResponseStatus(tx, r.id, status, finishedAt));
      return r.id;
    };
    const now = Date.now();
    const old = await mk('completed', now - 8 * DAY);
    const recent = await mk('completed', now - 6 * DAY);
    const running = await mk('in_progress', now - 30 * DAY);
    expect(await outputsLeft()).toEqual([running]);
    await pruneExpired({ ...ctx.deps, now: () => now });
    const left = (await ctx.query<{ id: string }>(sql`SELECT DISTINCT response_id AS id FROM response_events`)).map((r) => r.id);
    expect(left.sort()).toEqual([recent, running].sort());
    expect(left).not.toContain(old);
    expect(await outputsLeft()).toEqual([running]);
  });
});
