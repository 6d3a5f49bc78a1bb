import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { invalidInput } from '../http/errors';
import { iso } from '../ids';
import type { User } from '../db/schema';
import { countUnreadNews, listNewsForReader, markNewsRead, type NewsPostForUser, type NewsReader } from './news.store';

/** A page of news/list: the schema documents the default the handler applies. */
const NEWS_PAGE = { minimum: 1, maximum: 50, default: 20 };
/** Post ids are UUIDv7s as Parley makes them (time-ordered, so they also serve as the page cursor). */
const postId = (description?: string) => t.String({ pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', maxLength: 36, ...(description ? { description } : {}) });

const PostSchema = t.Object({
  id: t.String(),
  title: t.String(),
  body: t.String({ description: 'Markdown.' }),
  createdAt: t.String({ format: 'date-time' }),
  read: t.Boolean(),
});

const postView = (p: NewsPostForUser) => ({ id: p.id, title: p.title, body: p.body, createdAt: iso(p.createdAt), read: p.read });
const readerOf = (user: User): NewsReader => ({ userId: user.id, createdAt: user.createdAt });

export const newsOperations = [
  defineOperation({
    path: 'news/list',
    summary: "The server's announcements, newest first, with whether the caller has read each",
    description:
      'Posted by an admin (`parley news post`). `unreadCount` counts every unread post, not only this page\'s; posts published before the caller\'s account was made count as read. ' +
      'For the next page, send the last post\'s `id` as `before`; `hasMore` says whether there is one.',
    input: t.Object({
      unreadOnly: t.Optional(t.Boolean({ description: 'Only the posts the caller has not read (default false).' })),
      limit: t.Optional(t.Integer(NEWS_PAGE)),
      before: t.Optional(postId('A post id: only posts published before it.')),
    }),
    output: t.Object({ posts: t.Array(PostSchema), unreadCount: t.Integer(), hasMore: t.Boolean() }),
    handler: async ({ input, user, deps }) => {
      const limit = input.limit ?? NEWS_PAGE.default;
      const reader = readerOf(user);
      const [posts, unreadCount] = await deps.store.read(function* (tx) {
        return [yield* listNewsForReader(tx, reader, { limit: limit + 1, before: input.before, unreadOnly: input.unreadOnly }), yield* countUnreadNews(tx, reader)] as const;
      });
      return { posts: posts.slice(0, limit).map(postView), unreadCount, hasMore: posts.length > limit };
    },
  }),
  defineOperation({
    path: 'news/markRead',
    summary: 'Mark announcements read: the given ones, or all',
    description:
      'Exactly one of `ids` (up to 100 post ids) and `all: true`, else 400. Ids of posts that no longer exist are skipped, and marking a post twice changes nothing. Answers the unread count after the change.',
    input: t.Object({
      ids: t.Optional(t.Array(postId(), { minItems: 1, maxItems: 100 })),
      all: t.Optional(t.Literal(true)),
    }),
    output: t.Object({ success: t.Boolean(), unreadCount: t.Integer() }),
    // A read mark is a row per post and user: as many as there are posts, which admins write.
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      if ((input.ids === undefined) === (input.all === undefined))
        throw invalidInput([{ path: [], message: 'send either ids or all: true' }]);
      const reader = readerOf(user);
      const unreadCount = await deps.store.write(function* (tx) {
        yield* markNewsRead(tx, reader, input.all ? undefined : input.ids, deps.now());
        return yield* countUnreadNews(tx, reader);
      });
      return { success: true, unreadCount };
    },
  }),
];
