import { describe, expect, test } from 'bun:test';
import { createTestContext } from './helpers';
import { addWriter, appendItem, branchConversation, canWriteConversation, createConversation, findConversationById, listItems, removeWriter, truncateFromItem } from '../src/chat/conversation.store';

describe('conversation store', () => {
  test('owner and writers can write; others cannot; unknown conversations cannot be written', () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });
    const [ann, bob] = ctx.users as [any, any];
    const c = createConversation(ctx.db, { ownerId: ann.user.id, title: 'Plans' });
    expect(canWriteConversation(ctx.db, c.id, ann.user.id)).toBe(true);
    expect(canWriteConversation(ctx.db, c.id, bob.user.id)).toBe(false);
    addWriter(ctx.db, c.id, bob.user.id);
    addWriter(ctx.db, c.id, bob.user.id); // idempotent
    expect(canWriteConversation(ctx.db, c.id, bob.user.id)).toBe(true);
    removeWriter(ctx.db, c.id, bob.user.id);
    expect(canWriteConversation(ctx.db, c.id, bob.user.id)).toBe(false);
    expect(canWriteConversation(ctx.db, 'nope', ann.user.id)).toBe(false);
  });

  test('items keep their order', () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const c = createConversation(ctx.db, { ownerId: ann.user.id });
    for (const content of ['one', 'two', 'three']) appendItem(ctx.db, { conversationId: c.id, role: 'user', content, authorId: ann.user.id });
    expect(listItems(ctx.db, c.id).map((i) => [i.position, i.content])).toEqual([[0, 'one'], [1, 'two'], [2, 'three']]);
    expect(listItems(ctx.db, c.id)[0]!.parts).toEqual([]);
  });

  test('positions: an append after a truncation takes the first position removed; a branch goes on after the items it copied', () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const c = createConversation(ctx.db, { ownerId: ann.user.id });
    const add = (conversationId: string, content: string) => appendItem(ctx.db, { conversationId, role: 'user', content, authorId: ann.user.id });
    for (const content of ['a', 'b', 'c', 'd']) add(c.id, content);
    expect(truncateFromItem(ctx.db, listItems(ctx.db, c.id)[2]!)).toBe(2);
    expect(findConversationById(ctx.db, c.id)!.nextPosition).toBe(2);
    add(c.id, 'e');
    expect(listItems(ctx.db, c.id).map((i) => [i.position, i.content])).toEqual([[0, 'a'], [1, 'b'], [2, 'e']]);
    const branch = branchConversation(ctx.db, findConversationById(ctx.db, c.id)!, listItems(ctx.db, c.id)[1]!, ann.user.id);
    expect(branch.nextPosition).toBe(2);
    add(branch.id, 'f');
    expect(listItems(ctx.db, branch.id).map((i) => [i.position, i.content])).toEqual([[0, 'a'], [1, 'b'], [2, 'f']]);
    // Appending to a conversation that does not exist still fails on its foreign key.
    expect(() => add('no-such-conversation', 'x')).toThrow('FOREIGN KEY');
  });
});
