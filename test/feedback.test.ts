import { sql } from 'drizzle-orm';
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { createTestContext, shareWith, SPEC_ERRORS, type TestContext, type TestUser } from './helpers';
import { groupWith } from './group-helpers';
import { appendItem, createConversation } from '../src/chat/conversation.store';
import { readFeedbackExport } from '../src/feedback/feedback-export';

// Generous: the suite shares small machines with other work; these tests make many requests.
setDefaultTimeout(30_000);

const T0 = Date.parse('2026-06-01T12:00:00.000Z');

async function setup() {
  let clock = T0;
  const ctx = await createTestContext({
    users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }, { email: 'cat@example.org' }],
    now: () => clock,
  });
  const [ann, bob, cat] = ctx.users as [TestUser, TestUser, TestUser];
  const conv = await ctx.store.write((tx) => createConversation(tx, { ownerId: ann.user.id, title: 'Notes' }));
  const question = await add(ctx, conv.id, 'user', 'What is the capital of France?', ann.user.id);
  const answer = await add(ctx, conv.id, 'assistant', 'Paris.');
  return { ctx, ann, bob, cat, conv, question, answer, tick: (ms = 1000) => (clock += ms) };
}

const add = (ctx: TestContext, conversationId: string, role: 'user' | 'assistant' | 'tool', content: string, authorId?: string) =>
  ctx.store.write((tx) => appendItem(tx, { conversationId, role, content, authorId }));

/** A group of `creator` joined by `members`, with a member's question and the assistant's answer in it. */
async function groupWithAnswer(ctx: TestContext, creator: TestUser, members: TestUser[]) {
  const group = await groupWith(ctx, creator, members);
  const question = await add(ctx, group.conversationId, 'user', '@ai where shall we eat?', creator.user.id);
  const answer = await add(ctx, group.conversationId, 'assistant', 'Try the bistro on the corner.');
  return { group, question, answer };
}

const issuePaths = (body: any) => body.data.issues.map((i: any) => i.path);

describe('feedback', () => {
  test('set, replace, get and withdraw a rating of a chat answer', async () => {
    const { ctx, ann, conv, answer, tick } = await setup();
    const set = await ctx.json('feedback/setFeedback', { itemId: answer.id, rating: 'up', reasons: ['helpful', 'accurate'], comment: '  Spot on.  ' }, ann);
    expect(set.status).toBe(200);
    expect(set.body).toEqual({
      itemId: answer.id,
      rating: 'up',
      // Stored in the documented list's order, the comment trimmed.
      reasons: ['accurate', 'helpful'],
      comment: 'Spot on.',
      createdAt: '2026-06-01T12:00:00.000Z',
      updatedAt: '2026-06-01T12:00:00.000Z',
    });
    expect((await ctx.json('feedback/getFeedback', { itemIds: [answer.id] }, ann)).body).toEqual({ feedback: [set.body] });
    expect((await ctx.json('feedback/getFeedback', { conversationId: conv.id }, ann)).body).toEqual({ feedback: [set.body] });

    tick();
    // A second set replaces the first whole: reasons and comment left out are cleared.
    const again = await ctx.json('feedback/setFeedback', { itemId: answer.id, rating: 'down', comment: '   ' }, ann);
    expect(again.body).toEqual({ itemId: answer.id, rating: 'down', reasons: [], comment: null, createdAt: '2026-06-01T12:00:00.000Z', updatedAt: '2026-06-01T12:00:01.000Z' });
    expect(await ctx.count('answer_feedback')).toBe(1);
    expect((await ctx.json('feedback/getFeedback', { itemIds: [answer.id] }, ann)).body.feedback).toEqual([again.body]);

    expect(await ctx.json('feedback/deleteFeedback', { itemId: answer.id }, ann)).toMatchObject({ status: 200, body: { success: true } });
    expect(await ctx.json('feedback/deleteFeedback', { itemId: answer.id }, ann)).toMatchObject({ status: 200, body: { success: false } });
    expect((await ctx.json('feedback/getFeedback', { conversationId: conv.id }, ann)).body).toEqual({ feedback: [] });
    expect(await ctx.count('answer_feedback')).toBe(0);
  });

  test('one rating per user and answer; each user has their own; getFeedback answers in the order asked, only the caller\'s', async () => {
    const { ctx, ann, bob, conv, answer } = await setup();
    const second = await add(ctx, conv.id, 'assistant', 'Also: Lyon is second.');
    await shareWith(ctx, conv.id, ann, bob);
    // A writer of a shared chat reads it, so may rate it.
    expect((await ctx.json('feedback/setFeedback', { itemId: answer.id, rating: 'down', reasons: ['too_short'] }, bob)).status).toBe(200);
    expect((await ctx.json('feedback/setFeedback', { itemId: answer.id, rating: 'up' }, ann)).status).toBe(200);
    expect((await ctx.json('feedback/setFeedback', { itemId: second.id, rating: 'up' }, ann)).status).toBe(200);
    // Both at once: still one row for the pair.
    await Promise.all([ctx.json('feedback/setFeedback', { itemId: second.id, rating: 'down' }, ann), ctx.json('feedback/setFeedback', { itemId: second.id, rating: 'up' }, ann)]);
    expect(await ctx.count('answer_feedback')).toBe(3);

    const mine = (await ctx.json('feedback/getFeedback', { itemIds: [second.id, 'unknown', answer.id] }, ann)).body.feedback;
    expect(mine.map((f: any) => [f.itemId, f.rating])).toEqual([
      [second.id, expect.any(String)],
      [answer.id, 'up'],
    ]);
    const bobs = (await ctx.json('feedback/getFeedback', { conversationId: conv.id }, bob)).body.feedback;
    expect(bobs.map((f: any) => [f.itemId, f.rating, f.reasons])).toEqual([[answer.id, 'down', ['too_short']]]);
  });

  test('refusals: 401, 404 unknown, 403 someone else\'s answer, 400 not an answer or a bad input; nothing written', async () => {
    const { ctx, ann, bob, conv, question, answer } = await setup();
    const tool = await add(ctx, conv.id, 'tool', '{"result":1}');
    const rate = (body: unknown, as?: TestUser) => ctx.json('feedback/setFeedback', body, as);

    expect(await rate({ itemId: answer.id, rating: 'up' })).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });
    expect(await rate({ itemId: 'nope', rating: 'up' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect(await rate({ itemId: answer.id, rating: 'up' }, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    // The 403 comes first: a stranger learns nothing about the item's role.
    expect(await rate({ itemId: question.id, rating: 'up' }, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    for (const item of [question, tool]) {
      const r = await rate({ itemId: item.id, rating: 'up' }, ann);
      expect(r.status).toBe(400);
      expect(r.body.data.issues).toEqual([{ path: ['itemId'], message: 'not an assistant answer' }]);
    }
    const bad: [unknown, (string | number)[]][] = [
      [{ rating: 'up' }, ['itemId']],
      [{ itemId: answer.id, groupChatId: 'g', messageId: 'm', rating: 'up' }, []],
      [{ groupChatId: 'g', rating: 'up' }, ['messageId']],
      [{ messageId: 'm', rating: 'up' }, ['groupChatId']],
      [{ itemId: answer.id, rating: 'meh' }, ['rating']],
      [{ itemId: answer.id }, ['rating']],
      [{ itemId: answer.id, rating: 'up', reasons: ['nice'] }, ['reasons', 0]],
      [{ itemId: answer.id, rating: 'up', reasons: Array(11).fill('helpful') }, ['reasons']],
      [{ itemId: answer.id, rating: 'up', comment: 'x'.repeat(2001) }, ['comment']],
      [{ itemId: '', rating: 'up' }, ['itemId']],
    ];
    for (const [body, path] of bad) {
      const r = await rate(body, ann);
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect({ body, paths: issuePaths(r.body) }).toEqual({ body, paths: expect.arrayContaining([path]) });
    }
    const edge = await rate({ itemId: answer.id, rating: 'up', reasons: ['helpful', 'helpful'], comment: 'x'.repeat(2000) }, ann);
    expect({ status: edge.status, reasons: edge.body.reasons }).toEqual({ status: 200, reasons: ['helpful'] });
    expect(await ctx.count('answer_feedback')).toBe(1);

    // Withdrawing: the same refusals when the caller has no rating there.
    expect((await ctx.json('feedback/deleteFeedback', { itemId: answer.id })).status).toBe(401);
    expect((await ctx.json('feedback/deleteFeedback', { itemId: 'nope' }, ann)).status).toBe(404);
    expect((await ctx.json('feedback/deleteFeedback', { itemId: answer.id }, bob)).status).toBe(403);
    expect((await ctx.json('feedback/deleteFeedback', { itemId: question.id }, ann)).status).toBe(400);
    expect((await ctx.json('feedback/deleteFeedback', {}, ann)).status).toBe(400);
    expect(await ctx.count('answer_feedback')).toBe(1);

    // Reading: by conversation, the conversation's rules; by ids, only the caller's own ratings.
    expect((await ctx.json('feedback/getFeedback', { conversationId: conv.id })).status).toBe(401);
    expect(await ctx.json('feedback/getFeedback', { conversationId: conv.id }, bob)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await ctx.json('feedback/getFeedback', { conversationId: 'nope' }, ann)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect((await ctx.json('feedback/getFeedback', { itemIds: [answer.id] }, bob)).body).toEqual({ feedback: [] });
    for (const body of [{}, { itemIds: [answer.id], conversationId: conv.id }, { itemIds: [] }, { itemIds: Array(201).fill(answer.id) }])
      expect({ body, status: (await ctx.json('feedback/getFeedback', body, ann)).status }).toEqual({ body, status: 400 });
  });

  test('a group\'s assistant message: members rate it by group and message id or by item id; strangers and leavers cannot', async () => {
    const { ctx, ann, bob, cat } = await setup();
    const { group, question, answer } = await groupWithAnswer(ctx, ann, [bob]);
    const other = await groupWithAnswer(ctx, cat, []);

    const byMessage = await ctx.json('feedback/setFeedback', { groupChatId: group.id, messageId: answer.id, rating: 'down', reasons: ['off_topic'] }, bob);
    expect(byMessage.status).toBe(200);
    expect(byMessage.body).toMatchObject({ itemId: answer.id, rating: 'down', reasons: ['off_topic'] });
    // The message id is the item id: both forms name the same rating.
    expect((await ctx.json('feedback/setFeedback', { itemId: answer.id, rating: 'up' }, bob)).body.rating).toBe('up');
    expect(await ctx.count('answer_feedback')).toBe(1);
    expect((await ctx.json('feedback/setFeedback', { groupChatId: group.id, messageId: answer.id, rating: 'up' }, ann)).status).toBe(200);
    expect((await ctx.json('feedback/getFeedback', { conversationId: group.conversationId }, bob)).body.feedback.map((f: any) => [f.itemId, f.rating])).toEqual([[answer.id, 'up']]);
    expect((await ctx.json('feedback/getFeedback', { itemIds: [answer.id] }, ann)).body.feedback).toHaveLength(1);

    const rate = (body: object, as: TestUser) => ctx.json('feedback/setFeedback', { rating: 'up', ...body }, as);
    expect(await rate({ groupChatId: group.id, messageId: answer.id }, cat)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await rate({ itemId: answer.id }, cat)).toMatchObject({ status: 403, body: SPEC_ERRORS[403] });
    expect(await rate({ groupChatId: 'nope', messageId: answer.id }, bob)).toMatchObject({ status: 404, body: SPEC_ERRORS[404] });
    expect((await ctx.json('feedback/getFeedback', { conversationId: group.conversationId }, cat)).status).toBe(403);
    for (const [messageId, message] of [
      [question.id, 'not an assistant answer'],
      [other.answer.id, 'not a message of this group chat'],
      ['nope', 'not a message of this group chat'],
    ]) {
      const r = await rate({ groupChatId: group.id, messageId }, bob);
      expect(r.status).toBe(400);
      expect(r.body.data.issues).toEqual([{ path: ['messageId'], message }]);
    }
    // Naming another group's message through this group withdraws nothing either.
    expect((await ctx.json('feedback/deleteFeedback', { groupChatId: other.group.id, messageId: answer.id }, bob)).status).toBe(403);
    expect(await ctx.count('answer_feedback')).toBe(2);

    // Bob leaves: he may no longer rate the answer, but his own rating is his to withdraw.
    expect((await ctx.json('groupChat/leaveGroup', { groupChatId: group.id }, bob)).status).toBe(200);
    expect((await rate({ groupChatId: group.id, messageId: answer.id }, bob)).status).toBe(403);
    expect((await ctx.json('feedback/getFeedback', { itemIds: [answer.id] }, bob)).body.feedback).toHaveLength(1);
    expect(await ctx.json('feedback/deleteFeedback', { groupChatId: group.id, messageId: answer.id }, bob)).toMatchObject({ status: 200, body: { success: true } });
    expect(await ctx.json('feedback/deleteFeedback', { groupChatId: group.id, messageId: answer.id }, bob)).toMatchObject({ status: 403 });
    expect(await ctx.count('answer_feedback')).toBe(1);
  });

  test('the export reads page after page: every rating once, oldest change first, ties in id order', async () => {
    const { ctx, ann, bob, conv, answer, tick } = await setup();
    const more = [await add(ctx, conv.id, 'assistant', 'Two.'), await add(ctx, conv.id, 'assistant', 'Three.')];
    await shareWith(ctx, conv.id, ann, bob);
    // Four ratings at one millisecond, one later, then the first changed: it moves to the end.
    for (const [itemId, as] of [[answer.id, ann], [answer.id, bob], [more[0]!.id, ann], [more[1]!.id, bob]] as const)
      expect((await ctx.json('feedback/setFeedback', { itemId, rating: 'up' }, as)).status).toBe(200);
    tick();
    expect((await ctx.json('feedback/setFeedback', { itemId: more[1]!.id, rating: 'down' }, ann)).status).toBe(200);
    tick();
    expect((await ctx.json('feedback/setFeedback', { itemId: answer.id, rating: 'down' }, ann)).status).toBe(200);
    const rows = await ctx.query<{ id: string; updated_at: number | string }>(sql`SELECT id, updated_at FROM answer_feedback`);
    const expected = rows.sort((x, y) => Number(x.updated_at) - Number(y.updated_at) || (x.id < y.id ? -1 : 1)).map((r) => r.id);
    for (const pageRows of [1, 2, 5, 200]) {
      const pages: string[][] = [];
      for await (const page of readFeedbackExport(ctx.store, { handle: 'ai', pageRows })) pages.push(page.map((r) => r.id));
      expect({ pageRows, ids: pages.flat() }).toEqual({ pageRows, ids: expected });
      expect(pages.every((p) => p.length <= pageRows)).toBe(true);
    }
    const since = [];
    for await (const page of readFeedbackExport(ctx.store, { handle: 'ai', since: T0 + 1000, pageRows: 1 })) since.push(...page.map((r) => [r.itemId, r.rating]));
    expect(since).toEqual([[more[1]!.id, 'down'], [answer.id, 'down']]);
  });

  test('ratings go with their answer, conversation, group and user', async () => {
    const { ctx, ann, bob, conv, answer } = await setup();
    const ratings = async () => (await ctx.query<{ item_id: string; user_id: string }>(sql`SELECT item_id, user_id FROM answer_feedback ORDER BY item_id, user_id`)).map((r) => `${r.item_id}/${r.user_id}`);
    const up = (itemId: string, as: TestUser) => ctx.json('feedback/setFeedback', { itemId, rating: 'up' }, as).then((r) => expect(r.status).toBe(200));

    // A truncation that removes the answer.
    const q2 = await add(ctx, conv.id, 'user', 'And Germany?', ann.user.id);
    const a2 = await add(ctx, conv.id, 'assistant', 'Berlin.');
    await up(answer.id, ann);
    await up(a2.id, ann);
    expect((await ctx.json('chat/truncateConversationFromItem', { conversationId: conv.id, fromItemId: q2.id }, ann)).body).toMatchObject({ success: true });
    expect(await ratings()).toEqual([`${answer.id}/${ann.user.id}`]);

    // The conversation.
    expect((await ctx.json('chat/deleteConversation', { conversationId: conv.id }, ann)).status).toBe(200);
    expect(await ratings()).toEqual([]);

    // The group: everyone's ratings of its answers.
    const { group, answer: groupAnswer } = await groupWithAnswer(ctx, ann, [bob]);
    await up(groupAnswer.id, ann);
    await up(groupAnswer.id, bob);
    expect(await ratings()).toHaveLength(2);
    expect((await ctx.json('groupChat/deleteGroupChat', { groupChatId: group.id }, ann)).status).toBe(200);
    expect(await ratings()).toEqual([]);

    // The user: their ratings of others' answers go; others' ratings of theirs go with their conversations.
    const kept = await groupWithAnswer(ctx, ann, [bob]);
    const bobsConv = await ctx.store.write((tx) => createConversation(tx, { ownerId: bob.user.id }));
    const bobsAnswer = await add(ctx, bobsConv.id, 'assistant', 'Hello Bob.');
    await up(kept.answer.id, ann);
    await up(kept.answer.id, bob);
    await up(bobsAnswer.id, bob);
    await ctx.query(sql`DELETE FROM users WHERE id = ${bob.user.id}`);
    expect(await ratings()).toEqual([`${kept.answer.id}/${ann.user.id}`]);
  });
});
