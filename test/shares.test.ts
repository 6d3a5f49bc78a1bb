import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createTestContext, seedUser, SPEC_ERRORS, type TestUser } from './helpers';
import { appendItem, createConversation } from '../src/chat/conversation.store';
import { createGroupChat } from '../src/groups/group.store';

// Sharing a conversation (issue 30, item 8): an offer the recipient accepts or declines, answered
// alike whether or not the address has an account. Many requests; shared machines can be slow.
setDefaultTimeout(30_000);

async function setup(config = {}) {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org' }, { email: 'cy@example.org' }], config });
  const [ann, bob, cy] = ctx.users as [TestUser, TestUser, TestUser];
  const c = await ctx.store.write((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Trip plans' }));
  await ctx.store.write((tx) => appendItem(tx, { conversationId: c.id, role: 'user', content: 'Lisbon in May?' }));
  const share = (email: string, as = ann, conversationId = c.id) => ctx.json('chat/shareConversation', { conversationId, email }, as);
  const pending = async (as: TestUser) => (await ctx.json('chat/listPendingShares', {}, as)).body.shares;
  const sent = async (as = ann) => (await ctx.json('chat/listSentShares', {}, as)).body.shares;
  return { ctx, ann, bob, cy, c, share, pending, sent };
}

/** What the owner sees of an answer: everything but what differs per request. */
const seen = (r: { status: number; body: unknown; res: Response }) => ({
  status: r.status,
  body: r.body,
  headers: [...r.res.headers].filter(([k]) => !['x-request-id', 'date', 'server-timing'].includes(k)).sort(),
});

describe('sharing a conversation: the owner learns nothing about the address', () => {
  test('an address with an account, one without and one written differently: the same status, headers and body, an offer row each, the same list entries', async () => {
    const { ctx, c, share, sent } = await setup();
    const answers = [await share('bob@example.org'), await share('nobody@example.org'), await share('  Someone@Example.org ')];
    expect(answers.map(seen)).toEqual(Array(3).fill(seen(answers[0]!)));
    expect(answers[0]!.body).toEqual({ success: true });
    expect(await ctx.count('conversation_shares')).toBe(3);
    const list = await sent();
    expect(list.map((s: any) => Object.keys(s).sort())).toEqual(Array(3).fill(['conversationId', 'createdAt', 'email', 'shareId', 'title']));
    expect(list.map((s: any) => [s.email, s.conversationId, s.title]).sort()).toEqual([
      ['bob@example.org', c.id, 'Trip plans'],
      ['nobody@example.org', c.id, 'Trip plans'],
      ['someone@example.org', c.id, 'Trip plans'],
    ]);
    // Offering again changes nothing, with or without an account.
    expect((await share('bob@example.org')).body).toEqual({ success: true });
    expect((await share('nobody@example.org')).body).toEqual({ success: true });
    expect(await ctx.count('conversation_shares')).toBe(3);
  });

  test('the errors are about the conversation only: not the owner 403, unknown 404, a group chat\'s 409; oneself and writers: success, no offer', async () => {
    const { ctx, ann, bob, c, share } = await setup();
    expect(await share('bob@example.org', bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await share('nobody@example.org', bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await share('bob@example.org', ann, 'nope')).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    const group = await ctx.store.write((tx) => createGroupChat(tx, { name: 'Family', creatorId: ann.user.id }));
    const grouped = await share('bob@example.org', ann, group.conversationId);
    expect(grouped.status).toBe(409);
    expect(grouped.body.message).toContain('groupChat/createInvite');
    expect((await share('ANN@example.org')).body).toEqual({ success: true });
    await ctx.query(sql`INSERT INTO conversation_writers (conversation_id, user_id, created_at) VALUES (${c.id}, ${bob.user.id}, 1)`);
    expect((await share('bob@example.org')).body).toEqual({ success: true });
    expect(await ctx.count('conversation_shares')).toBe(0);
  });
});

describe('sharing a conversation: the recipient accepts or declines', () => {
  test('a pending share gives no access and is not in the conversation list; accepting makes the recipient a writer', async () => {
    const { ctx, ann, bob, c, share, pending, sent } = await setup();
    await share('bob@example.org');
    const [offer] = await pending(bob);
    expect(offer).toEqual({ shareId: expect.any(String), conversationId: c.id, title: 'Trip plans', sharedBy: { name: 'Ann', email: 'ann@example.org' }, createdAt: expect.stringMatching(/Z$/) });
    expect((await ctx.json('chat/listConversations', {}, bob)).body.conversations).toEqual([]);
    expect(await ctx.json('chat/getConversation', { conversationId: c.id }, bob)).toMatchObject({ status: 403 });
    expect((await ctx.json('chat/canWriteConversation', { conversationId: c.id }, bob)).body).toEqual({ canWrite: false });
    expect((await ctx.json('chat/renameConversation', { conversationId: c.id, title: 'mine' }, bob)).status).toBe(403);
    // Someone else cannot answer it, the owner included.
    expect(await ctx.json('chat/acceptShare', { shareId: offer.shareId }, ann)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await ctx.json('chat/declineShare', { shareId: offer.shareId }, ctx.users[2])).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });

    expect((await ctx.json('chat/acceptShare', { shareId: offer.shareId }, bob)).body).toEqual({ success: true, conversationId: c.id });
    expect((await ctx.json('chat/listConversations', {}, bob)).body.conversations.map((x: any) => x.id)).toEqual([c.id]);
    expect((await ctx.json('chat/getConversation', { conversationId: c.id }, bob)).status).toBe(200);
    expect(await pending(bob)).toEqual([]);
    expect(await sent()).toEqual([]);
    expect(await ctx.json('chat/acceptShare', { shareId: offer.shareId }, bob)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect(await ctx.json('chat/acceptShare', { shareId: 'nope' }, bob)).toMatchObject({ status: 404 });
  });

  test('declining: gone from the recipient\'s list, unchanged in the owner\'s; offered again it stays declined; withdrawn and offered again it is back', async () => {
    const { ctx, bob, c, share, pending, sent } = await setup();
    await share('bob@example.org');
    const before = await sent();
    const [offer] = await pending(bob);
    expect((await ctx.json('chat/declineShare', { shareId: offer.shareId }, bob)).body).toEqual({ success: true });
    expect(await pending(bob)).toEqual([]);
    expect(await sent()).toEqual(before);
    expect(await ctx.json('chat/acceptShare', { shareId: offer.shareId }, bob)).toMatchObject({ status: 404 });
    expect(await ctx.json('chat/declineShare', { shareId: offer.shareId }, bob)).toMatchObject({ status: 404 });
    await share('bob@example.org');
    expect(await pending(bob)).toEqual([]);
    expect((await ctx.json('chat/canWriteConversation', { conversationId: c.id }, bob)).body).toEqual({ canWrite: false });
    expect((await ctx.json('chat/withdrawShare', { shareId: before[0].shareId })).status).toBe(401);
    expect((await ctx.json('chat/withdrawShare', { shareId: before[0].shareId }, ctx.users[0])).body).toEqual({ success: true });
    await share('bob@example.org');
    expect((await pending(bob)).map((s: any) => s.conversationId)).toEqual([c.id]);
  });

  test('withdrawing: the owner only (403); the offer leaves both lists and cannot be accepted', async () => {
    const { ctx, bob, share, pending, sent } = await setup();
    await share('bob@example.org');
    const [offer] = await sent();
    expect(await ctx.json('chat/withdrawShare', { shareId: offer.shareId }, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect((await ctx.json('chat/withdrawShare', { shareId: offer.shareId }, ctx.users[0])).body).toEqual({ success: true });
    expect(await pending(bob)).toEqual([]);
    expect(await sent()).toEqual([]);
    expect(await ctx.json('chat/acceptShare', { shareId: offer.shareId }, bob)).toMatchObject({ status: 404 });
    expect(await ctx.json('chat/withdrawShare', { shareId: offer.shareId }, ctx.users[0])).toMatchObject({ status: 404 });
  });

  test('an address that gets an account later: the offer reaches it once offered again; deleting the conversation takes its offers', async () => {
    const { ctx, c, share, pending } = await setup();
    await share('later@example.org');
    const later = await seedUser(ctx.store, { email: 'later@example.org' });
    expect(await pending(later)).toEqual([]);
    await share('later@example.org');
    expect((await pending(later)).map((s: any) => s.conversationId)).toEqual([c.id]);
    await ctx.json('chat/deleteConversation', { conversationId: c.id }, ctx.users[0]);
    expect(await pending(later)).toEqual([]);
    expect(await ctx.count('conversation_shares')).toBe(0);
  });

  test('listSentShares of one conversation; listPendingShares newest first, from several owners', async () => {
    const { ctx, ann, bob, cy, c, share, pending, sent } = await setup();
    const other = await ctx.store.write((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Other' }));
    await share('bob@example.org');
    await share('bob@example.org', ann, other.id);
    const cys = await ctx.store.write((tx) => createConversation(tx, { ownerId: cy.user.id, title: "Cy's" }));
    await share('bob@example.org', cy, cys.id);
    expect((await pending(bob)).map((s: any) => s.title)).toEqual(["Cy's", 'Other', 'Trip plans']);
    expect((await ctx.json('chat/listSentShares', { conversationId: c.id }, ann)).body.shares.map((s: any) => s.title)).toEqual(['Trip plans']);
    expect((await sent()).map((s: any) => s.title)).toEqual(['Other', 'Trip plans']);
    expect((await ctx.json('chat/listSentShares', { conversationId: cys.id }, ann)).body.shares).toEqual([]);
  });
});

describe('sharing a conversation: bounded', () => {
  test('PARLEY_SHARES_MAX_PENDING_PER_USER: one more offer is 409 naming it, with or without an account alike; an offer made again is not one more; withdrawing makes room', async () => {
    const { ctx, share, sent } = await setup({ sharesMaxPendingPerUser: 2 });
    await share('bob@example.org');
    await share('nobody@example.org');
    const [a, b] = [await share('cy@example.org'), await share('nobody2@example.org')];
    expect(seen(a).body).toEqual(seen(b).body);
    expect(a.status).toBe(409);
    expect(a.body.data).toEqual({ reason: 'cap', cap: 'PARLEY_SHARES_MAX_PENDING_PER_USER', max: 2 });
    expect((await share('bob@example.org')).status).toBe(200);
    await ctx.json('chat/withdrawShare', { shareId: (await sent())[0].shareId }, ctx.users[0]);
    expect((await share('cy@example.org')).status).toBe(200);
  });

  test('ten offers of the same address at once make one; accepting twice at once makes one writer', async () => {
    const { ctx, bob, c, share, pending } = await setup();
    const answers = await Promise.all(Array.from({ length: 10 }, () => share('bob@example.org')));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(await ctx.count('conversation_shares')).toBe(1);
    const [offer] = await pending(bob);
    const accepted = await Promise.all([0, 1].map(() => ctx.json('chat/acceptShare', { shareId: offer.shareId }, bob)));
    expect(accepted.map((a) => a.status).sort()).toEqual([200, 404]);
    const [writers] = await ctx.query<{ n: number | string }>(sql`SELECT count(*) AS n FROM conversation_writers WHERE conversation_id = ${c.id}`);
    expect(Number(writers!.n)).toBe(1);
  });
});
