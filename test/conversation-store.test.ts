import { runOnSqlite, writeOnSqlite } from '../src/db/store';
import { describe, expect, test } from 'bun:test';
import { createTestContext } from './helpers';
import { addWriter, appendItem, branchConversation, canWriteConversation, createConversation, findConversationById, listItems, removeWriter, truncateFromItem } from '../src/chat/conversation.store';

describe('conversation store', () => {
  test('owner and writers can write; others cannot; unknown conversations cannot be written', () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }] });
    const [ann, bob] = ctx.users as [any, any];
    const c = runOnSqlite(ctx.db, (tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Plans' }));
    expect(runOnSqlite(ctx.db, (tx) => canWriteConversation(tx, c.id, ann.user.id))).toBe(true);
    expect(runOnSqlite(ctx.db, (tx) => canWriteConversation(tx, c.id, bob.user.id))).toBe(false);
    runOnSqlite(ctx.db, (tx) => addWriter(tx, c.id, bob.user.id));
    runOnSqlite(ctx.db, (tx) => addWriter(tx, c.id, bob.user.id)); // idempotent
    expect(runOnSqlite(ctx.db, (tx) => canWriteConversation(tx, c.id, bob.user.id))).toBe(true);
    runOnSqlite(ctx.db, (tx) => removeWriter(tx, c.id, bob.user.id));
    expect(runOnSqlite(ctx.db, (tx) => canWriteConversation(tx, c.id, bob.user.id))).toBe(false);
    expect(runOnSqlite(ctx.db, (tx) => canWriteConversation(tx, 'nope', ann.user.id))).toBe(false);
  });

  test('items keep their order', () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const c = runOnSqlite(ctx.db, (tx) => createConversation(tx, { ownerId: ann.user.id }));
    for (const content of ['one', 'two', 'three']) runOnSqlite(ctx.db, (tx) => appendItem(tx, { conversationId: c.id, role: 'user', content, authorId: ann.user.id }));
    expect(runOnSqlite(ctx.db, (tx) => listItems(tx, c.id)).map((i) => [i.position, i.content])).toEqual([[0, 'one'], [1, 'two'], [2, 'three']]);
    expect(runOnSqlite(ctx.db, (tx) => listItems(tx, c.id))[0]!.parts).toEqual([]);
  });

  test('positions: an append after a truncation takes the first position removed; a branch goes on after the items it copied', () => {
    const ctx = createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const c = runOnSqlite(ctx.db, (tx) => createConversation(tx, { ownerId: ann.user.id }));
    const add = (conversationId: string, content: string) => runOnSqlite(ctx.db, (tx) => appendItem(tx, { conversationId, role: 'user', content, authorId: ann.user.id }));
    for (const content of ['a', 'b', 'c', 'd']) add(c.id, content);
    expect(writeOnSqlite(ctx.db, (tx) => truncateFromItem(tx, runOnSqlite(ctx.db, (tx) => listItems(tx, c.id))[2]!))).toBe(2);
    expect(runOnSqlite(ctx.db, (tx) => findConversationById(tx, c.id))!.nextPosition).toBe(2);
    add(c.id, 'e');
    expect(runOnSqlite(ctx.db, (tx) => listItems(tx, c.id)).map((i) => [i.position, i.content])).toEqual([[0, 'a'], [1, 'b'], [2, 'e']]);
    const branch = writeOnSqlite(ctx.db, (tx) => branchConversation(tx, runOnSqlite(ctx.db, (tx) => findConversationById(tx, c.id))!, runOnSqlite(ctx.db, (tx) => listItems(tx, c.id))[1]!, ann.user.id));
    expect(branch.nextPosition).toBe(2);
    add(branch.id, 'f');
    expect(runOnSqlite(ctx.db, (tx) => listItems(tx, branch.id)).map((i) => [i.position, i.content])).toEqual([[0, 'a'], [1, 'b'], [2, 'f']]);
    // Appending to a conversation that does not exist still fails on its foreign key.
    expect(() => add('no-such-conversation', 'x')).toThrow('FOREIGN KEY');
  });
});
