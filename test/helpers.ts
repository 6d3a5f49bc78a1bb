import { createApp, operations } from '../src/app';
import { writeOnSqlite } from '../src/db/store';
import { openDatabase, type Db } from '../src/db/connection';
import { migrate } from '../src/db/migrate';
import { testConfig, type Config } from '../src/config';
import { createLogger, silentLogger, type Logger } from '../src/log';
import { createUser, type NewUser } from '../src/account/account.store';
import { createApiKey, createSession } from '../src/auth/auth.store';
import { DAY_MS } from '../src/time';
import type { AppDeps } from '../src/deps';
import { buildDeps } from '../src/build-deps';
import type { User } from '../src/db/schema';
import type { AnyOperation } from '../src/http/operation';

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
  db: Db;
  deps: AppDeps;
  users: TestUser[];
  /** POST a JSON body (or a raw string) to /api/<path> as `as` (a TestUser, headers, or nobody). */
  call(path: string, body?: unknown, as?: TestUser | Record<string, string>): Promise<Response>;
  /** Like `call`, and parse the JSON answer. */
  json<T = any>(path: string, body?: unknown, as?: TestUser | Record<string, string>): Promise<{ status: number; body: T; res: Response }>;
}

/**
 * A fresh app on a fresh in-memory SQLite database built by the real migrations, seeded with
 * the given users (each gets an API key and a session).
 */
export function createTestContext(
  opts: {
    users?: NewUser[];
    config?: Partial<Config>;
    log?: Logger;
    now?: () => number;
    deps?: Partial<AppDeps>;
    /** Extra operations mounted beside the real ones (e.g. a test-only event stream). */
    extraOperations?: readonly AnyOperation[];
    /** An existing database (e.g. a file a previous context used: a restart). */
    db?: Db;
  } = {},
): TestContext {
  const db = opts.db ?? openDatabase(':memory:');
  migrate(db.$client);
  const config = testConfig(opts.config);
  const log = opts.log ?? silentLogger;
  const now = opts.now ?? Date.now;
  const deps = buildDeps({ config, db, log, now, ...opts.deps });
  const app = createApp(deps, opts.extraOperations ? [...operations, ...opts.extraOperations] : operations);
  const users = (opts.users ?? []).map((u) => seedUser(db, u, config));
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
  return {
    app,
    db,
    deps,
    users,
    call,
    async json(path, body, as) {
      const res = await call(path, body, as);
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined, res };
    },
  };
}

export function seedUser(db: Db, input: NewUser, config: Config = testConfig()): TestUser {
  const user = writeOnSqlite(db, (tx) => createUser(tx, input, Date.now()));
  const { key, row } = writeOnSqlite(db, (tx) => createApiKey(tx, user.id, 'test', Date.now()));
  const s = writeOnSqlite(db, (tx) => createSession(tx, user.id, config.sessionTtlDays * DAY_MS, {}, Date.now()));
  return { user, key, keyId: row.id, token: s.token, sessionId: s.row.id };
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
