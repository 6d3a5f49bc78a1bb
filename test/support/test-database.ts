/**
 * The database the suite's apps run on (test/helpers.ts): an in-memory SQLite database by
 * default, or with `PARLEY_TEST_STORE=pg` a fresh PostgreSQL database per test context.
 *
 * On PostgreSQL one throwaway server serves the whole process (test/support/postgres.ts), started
 * on first use. A template database is migrated once; each context gets a copy of it (`CREATE
 * DATABASE … TEMPLATE`, a file copy: far faster than migrating). A test file's databases are
 * dropped once the next file makes its first one (files run one after another), and the server
 * stops after the last file (test/support/temp-root.ts, the preload) or, should the process end
 * without its hooks, when a watchdog sees it gone.
 */
import { describe, test } from 'bun:test';
import { SQL } from 'bun';
import { accessSync, constants } from 'node:fs';
import { migratePg } from '../../src/db/pg/migrate';
import { PG_BIN, startPostgres, type TestPostgres } from './postgres';

export const testStore: 'sqlite' | 'pg' = process.env.PARLEY_TEST_STORE === 'pg' ? 'pg' : 'sqlite';
if (!['', undefined, 'sqlite', 'pg'].includes(process.env.PARLEY_TEST_STORE)) throw new Error(`PARLEY_TEST_STORE is sqlite or pg, not ${process.env.PARLEY_TEST_STORE}`);
export const onPg = testStore === 'pg';

/**
 * For a test about SQLite itself (its file, WAL, pragmas, backups, the commit queue): skipped
 * when the suite runs on PostgreSQL. Say why beside each use.
 */
export const sqliteOnly = test.skipIf(onPg);
export const describeSqliteOnly = describe.skipIf(onPg);

const TEMPLATE = 'parley_template';
/** Connections per context: a server's pool is larger, but a test runs a few requests at once. */
const POOL = 4;

interface Server {
  pg: TestPostgres;
  /** On the `postgres` database: creates and drops the others. */
  admin: SQL;
}

interface Made {
  file: string;
  name: string;
  /** What to end before the database is dropped, last registered first. */
  closers: (() => unknown)[];
}

let server: Promise<Server> | undefined;
let count = 0;
const made: Made[] = [];

function startServer(): Promise<Server> {
  return (server ??= (async () => {
    if (!PG_BIN) throw new Error('PARLEY_TEST_STORE=pg: PostgreSQL 15+ is not installed (apt-get install postgresql, or set PARLEY_PG_BIN)');
    // A file's contexts hold a few connections each until the next file starts.
    const pg = await startPostgres({ maxConnections: 300, stopWhenGone: process.pid, parentDir: memoryDir() });
    const admin = new SQL({ url: pg.url, max: 1 });
    await admin.unsafe(`CREATE DATABASE ${TEMPLATE}`);
    const template = new SQL({ url: urlOf(pg, TEMPLATE), max: 1 });
    await migratePg(template);
    await template.close(); // a template must have no connection while it is copied
    return { pg, admin };
  })());
}

/** A memory file system (Linux's /dev/shm) if there is one we may write: copying a database there takes milliseconds, not a fifth of a second. */
function memoryDir(): string | undefined {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return undefined;
  }
}

const urlOf = (pg: TestPostgres, name: string) => pg.url.replace(/\/postgres$/, `/${name}`);

/** A new migrated database, empty; its URL. Dropped with the test file that made it. */
export async function freshPgDatabase(): Promise<string> {
  const { pg, admin } = await startServer();
  await dropEarlierFiles();
  const name = `parley_t${++count}`;
  // A file copy: on a memory file system twice as fast as the default (WAL_LOG) for a database this small.
  await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE} STRATEGY FILE_COPY`);
  made.push({ file: Bun.main, name, closers: [] });
  return urlOf(pg, name);
}

/**
 * Have `close` run when the test file that made the database at `url` is over, before the
 * database is dropped: what an app built on it keeps running (its timers renewing stream slots)
 * must not outlive it.
 */
export function atFileEnd(url: string, close: () => unknown): void {
  const name = new URL(url).pathname.slice(1);
  made.find((m) => m.name === name)?.closers.push(close);
}

/** A pool on a database `freshPgDatabase` made, closed with it (a context, or a second instance on the same database). */
export function connectTestPg(url: string): SQL {
  // Idle connections go: a context left open by a test holds none for long.
  const sql = new SQL({ url, max: POOL, idleTimeout: 5, connectionTimeout: 10 });
  atFileEnd(url, () => sql.close({ timeout: 0 }));
  return sql;
}

async function closeAll(m: Made): Promise<void> {
  for (const close of m.closers.reverse()) await Promise.resolve(close()).catch(() => {});
}

/** Close and drop the databases of the files that ran before this one. */
async function dropEarlierFiles(): Promise<void> {
  const done = made.filter((m) => m.file !== Bun.main);
  if (!done.length) return;
  made.splice(0, made.length, ...made.filter((m) => m.file === Bun.main));
  const { admin } = await server!;
  for (const m of done) {
    await closeAll(m);
    await admin.unsafe(`DROP DATABASE IF EXISTS ${m.name} WITH (FORCE)`);
  }
}

/** After the last file (the preload's global hook): stop the server, if one was started. */
export async function stopTestDatabases(): Promise<void> {
  if (!server) return;
  const { pg, admin } = await server;
  server = undefined;
  for (const m of made.splice(0)) await closeAll(m);
  await admin.close();
  await pg.stop();
}
