import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, notFound } from '../http/errors';
import type { AppDeps } from '../deps';
import type { MiniApp, NewsPost } from '../db/schema';
import { iso } from '../ids';
import { createNewsPost, deleteNewsPost, listNewsPosts } from '../news/news.store';
import { checkNewsPost, NEWS_TITLE_MAX_CHARS, NewsRefusal } from '../news/news.rules';
import { countUnreadSupportMessages, listSupportThreadsForAdmins } from '../support/support.store';
import { readThreadAsAdmin, replyAsAdmin, SupportRefusal, supportLimitsOf } from '../support/support.rules';
import { pushSupportReply } from '../support/support-push';
import { adminMessageView, adminThreadView, SupportMessageSchema, SupportThreadSchema } from '../support/support.view';
import { createMiniApp, findMiniAppNamed, listMiniApps, removeMiniApp, updateMiniApp } from '../miniapps/miniapp.store';
import { checkMiniAppDescription, checkMiniAppName, checkMiniAppUrl, MINI_APP_POSITION_MAX, MiniAppRefusal } from '../miniapps/miniapp.rules';

// The service's pages for admins: news, support answers and mini apps, the same stores and rules
// the CLI uses (cli/news.ts, cli/support.ts, cli/miniapps.ts), for the web app's Admin page.
// docs/api.md, "Administration".

const ADMIN_ONLY = 'Admins only: any other caller is answered 403.';
const Timestamp = t.String({ format: 'date-time' });

/** A rule's refusal (said for the CLI's options) as a 400 in the API's words. */
function badRequest(err: unknown): never {
  if (err instanceof NewsRefusal || err instanceof MiniAppRefusal || err instanceof SupportRefusal)
    throw new AppError(err instanceof SupportRefusal && err.kind === 'conflict' ? 'CONFLICT' : 'BAD_REQUEST', { message: err.message.replace(/^--(\w+)/, '$1') });
  throw err;
}
const checked = <T>(fn: () => T): T => {
  try {
    return fn();
  } catch (err) {
    return badRequest(err);
  }
};

const AdminPostSchema = t.Object({ id: t.String(), title: t.String(), body: t.String({ description: 'Markdown.' }), createdAt: Timestamp, readCount: t.Integer() });
const postView = (p: NewsPost, readCount = 0) => ({ id: p.id, title: p.title, body: p.body, createdAt: iso(p.createdAt), readCount });

const AdminThreadSchema = t.Composite([SupportThreadSchema, t.Object({ userId: t.String(), userEmail: t.String() })]);
const AdminMessageSchema = t.Composite([SupportMessageSchema, t.Object({ adminEmail: t.Union([t.String(), t.Null()]) })]);

const AdminMiniAppSchema = t.Object({
  id: t.String(),
  name: t.String(),
  url: t.String(),
  iconUrl: t.Union([t.String(), t.Null()]),
  description: t.Union([t.String(), t.Null()]),
  position: t.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
const miniAppView = (a: MiniApp) => ({ id: a.id, name: a.name, url: a.url, iconUrl: a.iconUrl, description: a.description, position: a.position, createdAt: iso(a.createdAt), updatedAt: iso(a.updatedAt) });
const MiniAppFieldsSchema = {
  name: t.String({ minLength: 1, maxLength: 100 }),
  url: t.String({ minLength: 1, maxLength: 2048, description: 'https (http only for localhost).' }),
  iconUrl: t.Optional(t.Union([t.String({ maxLength: 2048 }), t.Null()], { description: 'https (http only for localhost); null or empty clears it.' })),
  description: t.Optional(t.Union([t.String({ maxLength: 500 }), t.Null()], { description: 'null or empty clears it.' })),
  position: t.Optional(t.Integer({ minimum: 0, maximum: MINI_APP_POSITION_MAX, description: 'Lower first, ties by name; default after the last.' })),
};

/** The fields given, checked by the CLI's rules; `null` or an empty icon or description clears it. */
function miniAppFields(input: { name?: string; url?: string; iconUrl?: string | null; description?: string | null; position?: number }) {
  return checked(() => ({
    ...(input.name !== undefined ? { name: checkMiniAppName(input.name) } : {}),
    ...(input.url !== undefined ? { url: checkMiniAppUrl(input.url, 'url') } : {}),
    ...(input.iconUrl !== undefined ? { iconUrl: input.iconUrl?.trim() ? checkMiniAppUrl(input.iconUrl, 'iconUrl') : null } : {}),
    ...(input.description !== undefined ? { description: input.description === null ? null : checkMiniAppDescription(input.description) } : {}),
    ...(input.position !== undefined ? { position: input.position } : {}),
  }));
}

async function refuseTakenName(deps: AppDeps, name: string | undefined, exceptId?: string) {
  const other = name === undefined ? undefined : await deps.store.read((tx) => findMiniAppNamed(tx, name, exceptId));
  if (other) throw new AppError('CONFLICT', { message: `A mini app named ${JSON.stringify(other.name)} already exists.` });
}

export const adminServiceOperations = [
  defineOperation({
    path: 'admin/listNews',
    admin: true,
    summary: 'Every news post, newest first, with how many users have read it',
    description: `${ADMIN_ONLY} As \`parley news list\`.`,
    input: t.Object({}),
    output: t.Object({ posts: t.Array(AdminPostSchema) }),
    errors: [403],
    handler: async ({ deps }) => ({ posts: (await deps.store.read((tx) => listNewsPosts(tx))).map((p) => postView(p, p.readCount)) }),
  }),
  defineOperation({
    path: 'admin/postNews',
    admin: true,
    summary: 'Publish a news post to every user',
    description: `${ADMIN_ONLY} As \`parley news post\`: a one-line title (at most ${NEWS_TITLE_MAX_CHARS} characters) and a Markdown body (at most PARLEY_NEWS_BODY_MAX_CHARS characters), both trimmed, neither blank.`,
    input: t.Object({ title: t.String({ maxLength: NEWS_TITLE_MAX_CHARS }), body: t.String({ maxLength: 50_000 }) }),
    output: AdminPostSchema,
    errors: [403],
    handler: async ({ input, deps }) => {
      const post = checked(() => checkNewsPost(input, deps.config.newsBodyMaxChars));
      return postView(await deps.store.write((tx) => createNewsPost(tx, post, deps.now())));
    },
  }),
  defineOperation({
    path: 'admin/deleteNews',
    admin: true,
    summary: 'Delete a news post (and who has read it)',
    description: `${ADMIN_ONLY} Unknown post: 404.`,
    input: t.Object({ id: t.String() }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      if (!(await deps.store.write((tx) => deleteNewsPost(tx, input.id)))) throw notFound();
      return { success: true };
    },
  }),
  defineOperation({
    path: 'admin/listSupportThreads',
    admin: true,
    summary: "Every user's support threads, newest activity first, with what the admins have not read",
    description: `${ADMIN_ONLY} As \`parley support list\`; \`unreadCount\` counts the user's messages no admin has read.`,
    input: t.Object({
      status: t.Optional(t.Union([t.Literal('open'), t.Literal('closed'), t.Literal('all')], { default: 'open' })),
      limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, default: 100 })),
    }),
    output: t.Object({ threads: t.Array(AdminThreadSchema) }),
    errors: [403],
    handler: async ({ input, deps }) => {
      const status = input.status ?? 'open';
      const { threads, unread } = await deps.store.read(function* (tx) {
        const threads = yield* listSupportThreadsForAdmins(tx, { limit: input.limit ?? 100, status: status === 'all' ? undefined : status });
        return { threads, unread: yield* countUnreadSupportMessages(tx, threads.map((th) => th.id), 'admin') };
      });
      return { threads: threads.map((th) => adminThreadView(th, unread.get(th.id) ?? 0)) };
    },
  }),
  defineOperation({
    path: 'admin/getSupportThread',
    admin: true,
    summary: "A support thread and all its messages, oldest first; the user's messages become read by the admins",
    description: `${ADMIN_ONLY} As \`parley support show\`. Unknown thread: 404.`,
    input: t.Object({ threadId: t.String() }),
    output: t.Object({ thread: AdminThreadSchema, messages: t.Array(AdminMessageSchema) }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      const shown = await deps.store.write((tx) => readThreadAsAdmin(tx, input.threadId, deps.now()));
      if (!shown) throw notFound();
      return { thread: adminThreadView(shown.thread, 0), messages: shown.messages.map(adminMessageView) };
    },
  }),
  defineOperation({
    path: 'admin/replySupport',
    admin: true,
    summary: 'Answer a support thread; the user gets a push when push is on',
    description: `${ADMIN_ONLY} As \`parley support reply\`: a closed thread opens again, unless \`close\` is set (then the answer is the last word). \`name\` is shown to the user; the admin's e-mail is kept with the answer for the admins. A push that fails does not undo the answer (\`push.status\`). Unknown thread: 404.`,
    input: t.Object({
      threadId: t.String(),
      message: t.String({ minLength: 1, maxLength: 20_000 }),
      close: t.Optional(t.Boolean()),
      name: t.Optional(t.String({ maxLength: 100 })),
    }),
    output: t.Object({
      thread: AdminThreadSchema,
      message: AdminMessageSchema,
      push: t.Object({ status: t.Union([t.Literal('disabled'), t.Literal('no_devices'), t.Literal('sent'), t.Literal('failed')]), error: t.Union([t.String(), t.Null()]) }),
    }),
    errors: [403, 404],
    maxBodyBytes: 128 * 1024,
    handler: async ({ input, user, deps }) => {
      const reply = { message: input.message, close: input.close, adminName: input.name?.trim() || undefined, adminEmail: user.email };
      const posted = await deps.store.write((tx) => replyAsAdmin(tx, input.threadId, reply, supportLimitsOf(deps.config), deps.now())).catch(badRequest);
      if (!posted) throw notFound();
      const push = await pushSupportReply({ store: deps.store, log: deps.log, push: deps.push }, posted.thread, posted.message);
      return { thread: adminThreadView(posted.thread, 0), message: adminMessageView(posted.message), push: { status: push.status, error: push.error } };
    },
  }),
  defineOperation({
    path: 'admin/listMiniApps',
    admin: true,
    summary: 'The mini apps, in the order users see them, with their positions',
    description: `${ADMIN_ONLY} As \`parley miniapps list\`.`,
    input: t.Object({}),
    output: t.Object({ apps: t.Array(AdminMiniAppSchema) }),
    errors: [403],
    handler: async ({ deps }) => ({ apps: (await deps.store.read((tx) => listMiniApps(tx))).map(miniAppView) }),
  }),
  defineOperation({
    path: 'admin/addMiniApp',
    admin: true,
    summary: 'Offer a web app to every user',
    description: `${ADMIN_ONLY} As \`parley miniapps add\`: names unique regardless of case (409), addresses https (http only for localhost; 400 otherwise).`,
    input: t.Object(MiniAppFieldsSchema),
    output: AdminMiniAppSchema,
    errors: [403, 409],
    handler: async ({ input, deps }) => {
      const f = miniAppFields(input);
      await refuseTakenName(deps, f.name);
      const app = await deps.store.write((tx) => createMiniApp(tx, { name: f.name!, url: f.url!, iconUrl: f.iconUrl ?? null, description: f.description ?? null, position: f.position }, deps.now()));
      return miniAppView(app);
    },
  }),
  defineOperation({
    path: 'admin/updateMiniApp',
    admin: true,
    summary: "Change a mini app's name, address, icon, description or position",
    description: `${ADMIN_ONLY} As \`parley miniapps set\`: only the fields sent change. Unknown app: 404; a name another app has: 409.`,
    input: t.Object({ id: t.String(), ...Object.fromEntries(Object.entries(MiniAppFieldsSchema).map(([k, v]) => [k, t.Optional(v)])) }),
    output: AdminMiniAppSchema,
    errors: [403, 404, 409],
    handler: async ({ input, deps }) => {
      const { id, ...rest } = input as { id: string } & Parameters<typeof miniAppFields>[0];
      const f = miniAppFields(rest);
      await refuseTakenName(deps, f.name, id);
      const app = await deps.store.write((tx) => updateMiniApp(tx, id, f, deps.now()));
      if (!app) throw notFound();
      return miniAppView(app);
    },
  }),
  defineOperation({
    path: 'admin/removeMiniApp',
    admin: true,
    summary: 'Stop offering a mini app',
    description: `${ADMIN_ONLY} Unknown app: 404.`,
    input: t.Object({ id: t.String() }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      if (!(await deps.store.write((tx) => removeMiniApp(tx, input.id)))) throw notFound();
      return { success: true };
    },
  }),
];
