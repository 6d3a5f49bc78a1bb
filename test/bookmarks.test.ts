import { sql } from 'drizzle-orm';
import { describe, expect, test, setDefaultTimeout } from 'bun:test';
import { createTestContext, SPEC_ERRORS, type TestContext } from './helpers';
import { appendItem, createConversation } from '../src/chat/conversation.store';

// Generous: the suite shares small machines with other work; these tests make many requests.
setDefaultTimeout(30_000);

async function setup() {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });
  const [ann, bob] = ctx.users as [any, any];
  const conv = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Notes' }));
  const item = await ctx.store.read((tx) => appendItem(tx, { conversationId: conv.id, role: 'user', content: 'hello' }));
  return { ctx, ann, bob, conv, item };
}

const count = (ctx: TestContext, table: string) => ctx.count(table);

describe('bookmarks', () => {
  test('createGroup, addItem, listGroups, removeItem', async () => {
    const { ctx, ann, conv, item } = await setup();
    const g = await ctx.json('bookmarks/createGroup', { name: 'Reading' }, ann);
    expect(g.status).toBe(200);
    expect(Object.keys(g.body).sort()).toEqual(['createdAt', 'id', 'name', 'updatedAt']);
    expect(g.body.name).toBe('Reading');
    const whole = await ctx.json('bookmarks/addItem', { groupId: g.body.id, conversationId: conv.id }, ann);
    expect(whole.status).toBe(200);
    expect(whole.body).toMatchObject({ groupId: g.body.id, conversationId: conv.id, itemId: null });
    const one = await ctx.json('bookmarks/addItem', { groupId: g.body.id, conversationId: conv.id, itemId: item.id }, ann);
    expect(one.body.itemId).toBe(item.id);
    const list = await ctx.json('bookmarks/listGroups', {}, ann);
    expect(list.body.groups).toHaveLength(1);
    expect(list.body.groups[0]).toMatchObject({ id: g.body.id, name: 'Reading', itemCount: 2 });
    expect(list.body.groups[0].items.map((i: any) => i.id)).toEqual([whole.body.id, one.body.id]);
    const removed = await ctx.json('bookmarks/removeItem', { id: whole.body.id }, ann);
    expect(removed.body).toEqual({ success: true });
    expect((await ctx.json('bookmarks/listGroups', {}, ann)).body.groups[0].itemCount).toBe(1);
    expect((await ctx.json('bookmarks/removeItem', { id: whole.body.id }, ann)).body).toEqual(SPEC_ERRORS[404]);
  });

  test('deleteGroup removes the group and its items; 403 for another user\'s group, 404 unknown, 401 anonymous', async () => {
    const { ctx, ann, bob, conv, item } = await setup();
    const g = (await ctx.json('bookmarks/createGroup', { name: 'G' }, ann)).body;
    const other = (await ctx.json('bookmarks/createGroup', { name: 'Other' }, ann)).body;
    await ctx.json('bookmarks/addItem', { groupId: g.id, conversationId: conv.id }, ann);
    await ctx.json('bookmarks/addItem', { groupId: g.id, conversationId: conv.id, itemId: item.id }, ann);
    await ctx.json('bookmarks/addItem', { groupId: other.id, conversationId: conv.id }, ann);
    expect(await count(ctx, 'bookmark_items')).toBe(3);

    expect(await ctx.json('bookmarks/deleteGroup', { id: g.id }, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await count(ctx, 'bookmark_items')).toBe(3);
    expect(await ctx.json('bookmarks/deleteGroup', { id: 'nope' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect(await ctx.json('bookmarks/deleteGroup', { id: g.id })).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });

    const del = await ctx.json('bookmarks/deleteGroup', { id: g.id }, ann);
    expect(del).toMatchObject({ status: 200, body: { success: true } });
    expect(await count(ctx, 'bookmark_items')).toBe(1);
    expect((await ctx.json('bookmarks/listGroups', {}, ann)).body.groups.map((x: any) => x.id)).toEqual([other.id]);
    expect((await ctx.json('bookmarks/deleteGroup', { id: g.id }, ann)).status).toBe(404);
  });

  test('deleting a conversation (or its item) removes its bookmark items', async () => {
    const { ctx, ann, conv, item } = await setup();
    const g = (await ctx.json('bookmarks/createGroup', { name: 'G' }, ann)).body;
    const conv2 = await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id }));
    const item2 = await ctx.store.read((tx) => appendItem(tx, { conversationId: conv2.id, role: 'user', content: 'x' }));
    await ctx.json('bookmarks/addItem', { groupId: g.id, conversationId: conv.id, itemId: item.id }, ann);
    await ctx.json('bookmarks/addItem', { groupId: g.id, conversationId: conv2.id }, ann);
    await ctx.json('bookmarks/addItem', { groupId: g.id, conversationId: conv2.id, itemId: item2.id }, ann);
    await ctx.query(sql`DELETE FROM conversations WHERE id = ${conv.id}`);
    expect(await count(ctx, 'bookmark_items')).toBe(2);
    await ctx.query(sql`DELETE FROM conversation_items WHERE id = ${item2.id}`);
    const left = (await ctx.json('bookmarks/listGroups', {}, ann)).body.groups[0].items;
    expect(left).toHaveLength(1);
    expect(left[0]).toMatchObject({ conversationId: conv2.id, itemId: null });
  });

  test('addItem and removeItem check ownership and input', async () => {
    const { ctx, ann, bob, conv, item } = await setup();
    const annGroup = (await ctx.json('bookmarks/createGroup', { name: 'A' }, ann)).body;
    const bobGroup = (await ctx.json('bookmarks/createGroup', { name: 'B' }, bob)).body;
    // Bob cannot put Ann's conversation in his group, nor use Ann's group.
    expect((await ctx.json('bookmarks/addItem', { groupId: bobGroup.id, conversationId: conv.id }, bob)).status).toBe(403);
    expect((await ctx.json('bookmarks/addItem', { groupId: annGroup.id, conversationId: conv.id }, bob)).status).toBe(403);
    expect((await ctx.json('bookmarks/addItem', { groupId: 'nope', conversationId: conv.id }, ann)).status).toBe(404);
    expect((await ctx.json('bookmarks/addItem', { groupId: annGroup.id, conversationId: 'nope' }, ann)).status).toBe(404);
    const wrongItem = await ctx.json('bookmarks/addItem', { groupId: annGroup.id, conversationId: conv.id, itemId: 'nope' }, ann);
    expect(wrongItem.status).toBe(400);
    expect(wrongItem.body.data.issues[0].path).toEqual(['itemId']);
    const mine = (await ctx.json('bookmarks/addItem', { groupId: annGroup.id, conversationId: conv.id, itemId: item.id }, ann)).body;
    expect((await ctx.json('bookmarks/removeItem', { id: mine.id }, bob)).status).toBe(403);
    expect((await ctx.json('bookmarks/createGroup', { name: '' }, ann)).status).toBe(400);
    expect((await ctx.json('bookmarks/createGroup', { name: '   ' }, ann)).status).toBe(400);
    expect((await ctx.json('bookmarks/listGroups', {}, bob)).body.groups.map((g: any) => g.name)).toEqual(['B']);
    expect((await ctx.json('bookmarks/listGroups', {})).status).toBe(401);
  });
});
