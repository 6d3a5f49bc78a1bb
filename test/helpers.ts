import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql as rawSql, type SQL } from 'drizzle-orm';
import { createApp, operations } from '../src/app';
import { sqliteStore } from '../src/db/store';
import { pgStore } from '../src/db/pg/store';
import { openDatabase, type Db } from '../src/db/connection';
import { migrate } from '../src/db/migrate';
import { rawRows, type Store } from '../src/db/work';
import { testConfig, type Config } from '../src/config';
import { createLogger, silentLogger, type Logger } from '../src/log';
import { createUser, type NewUser } from '../src/account/account.store';
import { createApiKey, createSession } from '../src/auth/auth.store';
import { DAY_MS } from '../src/time';
import type { AppDeps } from '../src/deps';
import { buildDeps } from '../src/build-deps';
import type { User } from '../src/db/schema';
import type { AnyOperation } from '../src/http/operation';
import { atFileEnd, connectTestPg, freshPgDatabase, onPg } from './support/test-database';

export { onPg, sqliteOnly, describeSqliteOnly } from './support/test-database';

export interface TestUser {
  user: User;
  /** API key: send as `x-api-key`. */
  key: string;
  keyId: string;
  /** Session bearer token. */
  token: string;
  sessionId: string;
}

export interface TestContext {
  app: ReturnType<typeof createApp>;
  /** The app's database on either store: `ctx.store.read((tx) => …)` and `write`, as the domains do. */
  store: Store;
  /**
   * The SQLite database, for tests about SQLite itself (marked `sqliteOnly`): reading it on a
   * PostgreSQL run throws.
   */
  db: Db;
  deps: AppDeps;
  users: TestUser[];
  /** POST a JSON body (or a raw string) to /api/<path> as `as` (a TestUser, headers, or nobody). */
  call(path: string, body?: unknown, as?: TestUser | Record<string, string>): Promise<Response>;
  /** Like `call`, and parse the JSON answer. */
  json<T = any>(path: string, body?: unknown, as?: TestUser | Record<string, string>): Promise<{ status: number; body: T; res: Response }>;
  /** Raw SQL on either database (drizzle's `sql` template, so placeholders suit both): its rows. */
  query<T = Record<string, unknown>>(query: SQL): Promise<T[]>;
  /** How many rows `table` holds. */
  count(table: string): Promise<number>;
  /** Drop a table, to make the store fail underneath a handler. */
  dropTable(table: string): Promise<void>;
  /** Close the connection (the "process" ends); `sameDatabaseAs` then opens the database again. */
  close(): Promise<void>;
}

/** Where a context's data is: a SQLite connection, or a PostgreSQL database's URL. */
type Database = { db: Db } | { url: string };

/** Where a context's database is, so another context can open it too (`sameDatabaseAs`). */
const databaseOf = new WeakMap<TestContext, Database>();

/** SQLite connections a context closed (`close`): a context after the restart opens the file again. */
const closed = new WeakSet<Db>();

async function databaseFor(opts: { db?: Db; sameDatabaseAs?: TestContext; durable?: boolean; pgUrl?: string }): Promise<Database> {
  const shared = opts.sameDatabaseAs && databaseOf.get(opts.sameDatabaseAs);
  if (shared) return 'db' in shared && closed.has(shared.db) ? { db: openDatabase(shared.db.$client.filename) } : shared;
  if (opts.db) return { db: opts.db };
  if (opts.pgUrl) return { url: opts.pgUrl };
  if (onPg) return { url: await freshPgDatabase() };
  return { db: openDatabase(opts.durable ? join(mkdtempSync(join(tmpdir(), 'parley-ctx-')), 'parley.db') : ':memory:') };
}

/**
 * A fresh app on a fresh database built by the real migrations, seeded with the given users (each
 * gets an API key and a session): SQLite in memory, or PostgreSQL with `PARLEY_TEST_STORE=pg`
 * (test/support/test-database.ts).
 */
export async function createTestContext(
  opts: {
    users?: NewUser[];
    config?: Partial<Config>;
    log?: Logger;
    now?: () => number;
    /** Parts of the app replacing the defaults; a function gets the context's store (to build a part on it). */
    deps?: Partial<AppDeps> | ((store: Store) => Partial<AppDeps>);
    /** Extra operations mounted beside the real ones (e.g. a test-only event stream). */
    extraOperations?: readonly AnyOperation[];
    /** An existing SQLite database (a test about SQLite: a data directory's file). */
    db?: Db;
    /** An existing PostgreSQL database, as it is (not migrated here: a test about a migration). */
    pgUrl?: string;
    /**
     * Another context's database, on either store: a second instance (sharing its SQLite
     * connection, or a pool of its own on PostgreSQL), or the app after a restart (once that
     * context is closed: a new connection to its `durable` file).
     */
    sameDatabaseAs?: TestContext;
    /** On SQLite, a database file that outlives the context's connection (a restart opens it again) instead of memory. */
    durable?: boolean;
  } = {},
): Promise<TestContext> {
  const database = await databaseFor(opts);
  const db = 'db' in database ? database.db : undefined;
  if (db) migrate(db.$client);
  const pool = db ? undefined : connectTestPg((database as { url: string }).url);
  const store = db ? sqliteStore(db) : pgStore(pool!);
  // The app's settings say where its data is, as a server's do (admin/doctor checks that database).
  const config = testConfig({ ...('url' in database ? { databaseUrl: database.url } : {}), ...opts.config });
  const log = opts.log ?? silentLogger;
  const now = opts.now ?? Date.now;
  const deps = buildDeps({ config, db, store, log, now, ...(typeof opts.deps === 'function' ? opts.deps(store) : opts.deps) });
  // On PostgreSQL the app keeps timers on its database (stream slots' renewal): they stop with the file.
  if ('url' in database) atFileEnd(database.url, () => deps.lifecycle.shutdown(100));
  const app = createApp(deps, opts.extraOperations ? [...operations, ...opts.extraOperations] : operations);
  const users: TestUser[] = [];
  for (const u of opts.users ?? []) users.push(await seedUser(store, u, config));
  const headersFor = (as?: TestUser | Record<string, string>): Record<string, string> =>
    !as ? {} : 'key' in as && 'user' in as ? { 'x-api-key': (as as TestUser).key } : (as as Record<string, string>);
  const call = (path: string, body?: unknown, as?: TestUser | Record<string, string>) =>
    app.handle(
      new Request(`http://localhost/api/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headersFor(as) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      }),
    );
  const query = <T>(q: SQL) => store.read(() => rawRows<T>(q));
  const ctx: TestContext = {
    app,
    store,
    get db(): Db {
      if (!db) throw new Error('ctx.db is SQLite\'s: a test that needs it is sqliteOnly (test/helpers.ts)');
      return db;
    },
    deps,
    users,
    call,
    async json(path, body, as) {
      const res = await call(path, body, as);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined, res };
    },
    query,
    async count(table) {
      const [row] = await query<{ n: number | string }>(rawSql`SELECT count(*) AS n FROM ${rawSql.identifier(table)}`);
      return Number(row!.n);
    },
    async dropTable(table) {
      // PostgreSQL refuses to drop a table other tables' foreign keys point at, unless told to.
      await query(rawSql`DROP TABLE ${rawSql.identifier(table)}${store.dialect === 'pg' ? rawSql` CASCADE` : rawSql``}`);
    },
    async close() {
      if (db) {
        db.$client.close();
        closed.add(db);
      } else await pool!.close();
    },
  };
  databaseOf.set(ctx, database);
  return ctx;
}

/** The database settings of a server a test starts (`startServer`): on a PostgreSQL run, a fresh database of its own. */
export async function serverDatabase(): Promise<Partial<Config>> {
  return onPg ? { databaseUrl: await freshPgDatabase() } : {};
}

/** A user with an API key and a session, written through the store (either database). */
export async function seedUser(store: Store, input: NewUser, config: Config = testConfig()): Promise<TestUser> {
  return store.write(function* (tx) {
    const user = yield* createUser(tx, input, Date.now());
    const { key, row } = yield* createApiKey(tx, user.id, 'test', Date.now());
    const s = yield* createSession(tx, user.id, config.sessionTtlDays * DAY_MS, {}, Date.now());
    return { user, key, keyId: row.id, token: s.token, sessionId: s.row.id };
  });
}

/** Wait until `check` holds (polling), or fail saying `what`: for work that runs in the background. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); await Bun.sleep(5)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

/**
 * How `p` failed ('' when it did not): the error's message and its cause's, since drizzle wraps the
 * database's error ("Failed query: …", PostgreSQL's own words in the cause). Match it with a
 * pattern for both databases: /UNIQUE|duplicate key/, /FOREIGN KEY|foreign key/.
 */
export async function failureOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return '';
  } catch (err) {
    const e = err as Error;
    return [e.message, (e.cause as Error | undefined)?.message].filter(Boolean).join(' ');
  }
}

/** `owner` shares a conversation with `recipient` through the API, and the recipient accepts it. */
export async function shareWith(ctx: TestContext, conversationId: string, owner: TestUser, recipient: TestUser): Promise<void> {
  const offered = await ctx.json('chat/shareConversation', { conversationId, email: recipient.user.email }, owner);
  if (offered.status !== 200) throw new Error(`shareConversation answered ${offered.status}`);
  const { shares } = (await ctx.json('chat/listPendingShares', {}, recipient)).body as { shares: { shareId: string; conversationId: string }[] };
  const share = shares.find((s) => s.conversationId === conversationId);
  if (!share) throw new Error('the share is not among the recipient\'s pending ones');
  const accepted = await ctx.json('chat/acceptShare', { shareId: share.shareId }, recipient);
  if (accepted.status !== 200) throw new Error(`acceptShare answered ${accepted.status}`);
}

export const bearer = (u: TestUser) => ({ authorization: `Bearer ${u.token}` });
export const cookie = (u: TestUser) => ({ cookie: `parley_session=${u.token}` });

/** Capture log lines for assertions. */
export function captureLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger('debug', (l) => lines.push(l)), lines };
}

export const ENVELOPE_KEYS = ['code', 'data', 'defined', 'message', 'status'];

export const SPEC_ERRORS = {
  401: { defined: true, code: 'UNAUTHORIZED', status: 401, message: 'Authentication is required to access this endpoint.', data: {} },
  403: { defined: true, code: 'FORBIDDEN', status: 403, message: 'You do not have permission to perform this action.', data: {} },
  404: { defined: true, code: 'NOT_FOUND', status: 404, message: 'The requested resource was not found.', data: {} },
  500: { defined: true, code: 'INTERNAL_SERVER_ERROR', status: 500, message: 'Unexpected server error.', data: {} },
} as const;
