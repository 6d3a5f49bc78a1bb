import { describe, expect, test } from 'bun:test';
import { createTestContext, SPEC_ERRORS, type TestUser } from './helpers';
import { groupWith } from './group-helpers';
import { parseRate } from '../src/http/rate-limit';
import { canWriteConversation, findConversationById, listItems } from '../src/chat/conversation.store';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function threeUsers(config = {}) {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }, { email: 'cy@example.org', name: 'Cy' }], config });
  const [ann, bob, cy] = ctx.users as [TestUser, TestUser, TestUser];
  return { ctx, ann, bob, cy };
}

describe('group chats', () => {
  test('createGroupChat answers every field and makes the creator member and writer', async () => {
    const { ctx, ann, bob } = await threeUsers();
    const res = await ctx.json('groupChat/createGroupChat', { name: 'Trip' }, ann);
    expect(res.status).toBe(200);
    const g = res.body;
    expect(Object.keys(g).sort()).toEqual(['assistantId', 'conversationId', 'createdAt', 'creatorId', 'id', 'intelligentResponses', 'model', 'name', 'updatedAt']);
    expect(g).toMatchObject({ name: 'Trip', creatorId: ann.user.id, intelligentResponses: true, model: null, assistantId: null });
    expect(g.createdAt).toMatch(ISO);
    expect(g.updatedAt).toMatch(ISO);
    expect((await ctx.store.read((tx) => findConversationById(tx, g.conversationId)))?.ownerId).toBe(ann.user.id);
    expect(await ctx.store.read((tx) => canWriteConversation(tx, g.conversationId, ann.user.id))).toBe(true);
    expect(await ctx.store.read((tx) => canWriteConversation(tx, g.conversationId, bob.user.id))).toBe(false);
    expect((await ctx.json('groupChat/listGroupChats', {}, ann)).body.groupChats.map((x: any) => x.id)).toEqual([g.id]);
    expect((await ctx.json('groupChat/listGroupChats', {}, bob)).body.groupChats).toEqual([]);
    expect((await ctx.json('groupChat/createGroupChat', { name: 'x' })).body).toEqual(SPEC_ERRORS[401]);
    expect((await ctx.json('groupChat/createGroupChat', { name: '' }, ann)).status).toBe(400);
  });

  test('invite and join: member, writer, idempotent; unknown or expired codes are 404', async () => {
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org', name: 'Ann' }, { email: 'bob@example.org', name: 'Bob' }, { email: 'cy@example.org' }], now: () => clock, config: { groupInviteTtlHours: 2 } });
    const [ann, bob, cy] = ctx.users as [TestUser, TestUser, TestUser];
    const g = await groupWith(ctx, ann);
    expect((await ctx.json('groupChat/createInvite', { groupChatId: g.id }, bob)).body).toEqual(SPEC_ERRORS[403]);
    const invite = await ctx.json('groupChat/createInvite', { groupChatId: g.id }, ann);
    expect(invite.status).toBe(200);
    expect(invite.body).toEqual({ code: expect.any(String), expiresAt: '2026-01-01T02:00:00.000Z' });
    const joined = await ctx.json('groupChat/joinGroup', { code: invite.body.code }, bob);
    expect(joined.status).toBe(200);
    expect(joined.body.id).toBe(g.id);
    expect(await ctx.store.read((tx) => canWriteConversation(tx, g.conversationId, bob.user.id))).toBe(true);
    expect((await ctx.json('chat/canWriteConversation', { conversationId: g.conversationId }, bob)).body).toEqual({ canWrite: true });
    expect((await ctx.json('chat/canWriteConversation', { conversationId: g.conversationId }, cy)).body).toEqual({ canWrite: false });
    expect((await ctx.json('groupChat/joinGroup', { code: invite.body.code }, bob)).status).toBe(200);
    const members = (await ctx.json('groupChat/listMembers', { groupChatId: g.id }, bob)).body.members;
    expect(members.map((m: any) => [m.name, m.isCreator])).toEqual([
      ['Ann', true],
      ['Bob', false],
    ]);
    expect((await ctx.json('groupChat/joinGroup', { code: 'nope' }, cy)).body).toEqual(SPEC_ERRORS[404]);
    clock += 2 * 3_600_000;
    expect((await ctx.json('groupChat/joinGroup', { code: invite.body.code }, cy)).body).toEqual(SPEC_ERRORS[404]);
    expect((await ctx.json('groupChat/listGroupChats', {}, bob)).body.groupChats.map((x: any) => [x.id, x.memberCount])).toEqual([[g.id, 2]]);
  });

  test('sendGroupMessage: the message object, stored in the conversation; 403 non-member, 404 unknown', async () => {
    const { ctx, ann, bob, cy } = await threeUsers();
    const g = await groupWith(ctx, ann, [bob]);
    const res = await ctx.json('groupChat/sendGroupMessage', { groupChatId: g.id, message: 'hello all' }, bob);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.any(String),
      type: 'message',
      role: 'user',
      content: 'hello all',
      parts: [],
      sender: { id: bob.user.id, name: 'Bob', image: '' },
      createdAt: expect.stringMatching(ISO),
    });
    const items = await ctx.store.read((tx) => listItems(tx, g.conversationId));
    expect(items.map((i) => [i.id, i.role, i.content, i.authorId])).toEqual([[res.body.id, 'user', 'hello all', bob.user.id]]);
    expect((await ctx.json('groupChat/sendGroupMessage', { groupChatId: g.id, message: 'hi' }, cy)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('groupChat/sendGroupMessage', { groupChatId: 'nope', message: 'hi' }, ann)).body).toEqual(SPEC_ERRORS[404]);
    expect((await ctx.json('groupChat/sendGroupMessage', { groupChatId: g.id, message: '' }, ann)).status).toBe(400);
  });

  test('sendGroupMessage counts against the write rate limit', async () => {
    const { ctx, ann } = await threeUsers({ rateLimitWrite: parseRate('2/min', 'test') });
    const g = await groupWith(ctx, ann);
    for (const message of ['one', 'two']) expect((await ctx.json('groupChat/sendGroupMessage', { groupChatId: g.id, message }, ann)).status).toBe(200);
    const over = await ctx.call('groupChat/sendGroupMessage', { groupChatId: g.id, message: 'three' }, ann);
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBeTruthy();
    expect((await ctx.store.read((tx) => listItems(tx, g.conversationId))).map((i) => i.content)).toEqual(['one', 'two']);
  });

  test('a failing store answers the 500 envelope and keeps nothing half-written', async () => {
    const { ctx, ann } = await threeUsers();
    const g = await groupWith(ctx, ann);
    await ctx.dropTable('group_events');
    const res = await ctx.json('groupChat/sendGroupMessage', { groupChatId: g.id, message: 'lost' }, ann);
    expect(res.status).toBe(500);
    expect(res.body).toEqual(SPEC_ERRORS[500]);
    expect(await ctx.store.read((tx) => listItems(tx, g.conversationId))).toEqual([]);
  });

  test('listMessages pages backwards with before/limit and names senders', async () => {
    const { ctx, ann, bob, cy } = await threeUsers();
    const g = await groupWith(ctx, ann, [bob]);
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push((await ctx.json('groupChat/sendGroupMessage', { groupChatId: g.id, message: `m${i}` }, i % 2 ? bob : ann)).body);
    const last = await ctx.json('groupChat/listMessages', { groupChatId: g.id, limit: 2 }, bob);
    expect(last.body).toEqual({ messages: sent.slice(3), hasMore: true });
    const older = await ctx.json('groupChat/listMessages', { groupChatId: g.id, before: sent[3].id, limit: 10 }, bob);
    expect(older.body).toEqual({ messages: sent.slice(0, 3), hasMore: false });
    expect((await ctx.json('groupChat/listMessages', { groupChatId: g.id }, cy)).body).toEqual(SPEC_ERRORS[403]);
  });

  test('deleteGroupChat: creator only (403 for members and strangers), 404 unknown; removes everything', async () => {
    const { ctx, ann, bob, cy } = await threeUsers();
    const g = await groupWith(ctx, ann, [bob]);
    await ctx.json('groupChat/sendGroupMessage', { groupChatId: g.id, message: 'x' }, bob);
    await ctx.json('groupChat/createInvite', { groupChatId: g.id }, bob);
    expect((await ctx.json('groupChat/deleteGroupChat', { groupChatId: g.id }, bob)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('groupChat/deleteGroupChat', { groupChatId: g.id }, cy)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('groupChat/deleteGroupChat', { groupChatId: 'nope' }, ann)).body).toEqual(SPEC_ERRORS[404]);
    expect((await ctx.json('groupChat/deleteGroupChat', { groupChatId: g.id }, ann)).body).toEqual({ success: true });
    expect(await ctx.store.read((tx) => findConversationById(tx, g.conversationId))).toBeUndefined();
    for (const table of ['group_chats', 'group_members', 'group_invites', 'group_events', 'conversation_items', 'conversation_writers']) {
      expect({ table, n: await ctx.count(table) }).toEqual({ table, n: 0 });
    }
    expect((await ctx.json('groupChat/deleteGroupChat', { groupChatId: g.id }, ann)).body).toEqual(SPEC_ERRORS[404]);
    expect((await ctx.json('groupChat/listGroupChats', {}, bob)).body.groupChats).toEqual([]);
  });

  test('leaveGroup removes membership and write access; the creator cannot leave', async () => {
    const { ctx, ann, bob } = await threeUsers();
    const g = await groupWith(ctx, ann, [bob]);
    expect((await ctx.json('groupChat/leaveGroup', { groupChatId: g.id }, ann)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('groupChat/leaveGroup', { groupChatId: g.id }, bob)).body).toEqual({ success: true });
    expect(await ctx.store.read((tx) => canWriteConversation(tx, g.conversationId, bob.user.id))).toBe(false);
    expect((await ctx.json('groupChat/sendGroupMessage', { groupChatId: g.id, message: 'x' }, bob)).body).toEqual(SPEC_ERRORS[403]);
    expect((await ctx.json('groupChat/leaveGroup', { groupChatId: g.id }, bob)).body).toEqual(SPEC_ERRORS[403]);
  });

  test('setIntelligentResponses: creator only', async () => {
    const { ctx, ann, bob } = await threeUsers();
    const g = await groupWith(ctx, ann, [bob]);
    expect((await ctx.json('groupChat/setIntelligentResponses', { groupChatId: g.id, enabled: false }, bob)).body).toEqual(SPEC_ERRORS[403]);
    const off = await ctx.json('groupChat/setIntelligentResponses', { groupChatId: g.id, enabled: false }, ann);
    expect(off.body).toMatchObject({ id: g.id, intelligentResponses: false });
    expect((await ctx.json('groupChat/setIntelligentResponses', { groupChatId: 'nope', enabled: true }, ann)).body).toEqual(SPEC_ERRORS[404]);
  });
});
