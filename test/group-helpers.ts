import { expect } from 'bun:test';
import type { TestContext, TestUser } from './helpers';
import { readSse } from './group-sse';

/** A group created by `creator`, joined by `members` through a real invite. */
export async function groupWith(ctx: TestContext, creator: TestUser, members: TestUser[] = [], name = 'Trip') {
  const group = (await ctx.json('groupChat/createGroupChat', { name }, creator)).body;
  if (members.length) {
    const { code } = (await ctx.json('groupChat/createInvite', { groupChatId: group.id }, creator)).body;
    for (const m of members) expect((await ctx.json('groupChat/joinGroup', { code }, m)).status).toBe(200);
  }
  return group;
}

/** Open the group's stream and read its opening comment. */
export async function subscribe(ctx: TestContext, u: TestUser, groupChatId: string, lastEventId?: string) {
  const res = await ctx.call('groupChat/subscribeToGroup', { groupChatId }, { 'x-api-key': u.key, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toStartWith('text/event-stream');
  const sse = readSse(res);
  expect((await sse.next()).comment).toBe('open');
  return sse;
}

export const send = (ctx: TestContext, u: TestUser, groupChatId: string, message: string) =>
  ctx.json('groupChat/sendGroupMessage', { groupChatId, message }, u).then((r) => {
    expect(r.status).toBe(200);
    return r.body;
  });
