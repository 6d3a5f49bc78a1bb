/**
 * The store interface's cost on SQLite (src/db/work.ts): the same queries as a plain drizzle call
 * and as a unit of work run by `sqliteStore` (a generator step and one promise per call), in the
 * same process, alternating, best of 5 rounds. And the same units of work on PostgreSQL, when a
 * server is installed, for scale (a network round trip per step, so not a like-for-like ratio).
 *
 *   node_modules/.bin/bun run bench/store-overhead.ts [--pg]
 *
 * Not part of bench/run.ts's figures: it measures the layer, not the server.
 */
import { SQL } from 'bun';
import { eq } from 'drizzle-orm';
import { openDatabase, writeTx } from '../src/db/connection';
import { migrate } from '../src/db/migrate';
import { bookmarkGroups, bookmarkItems } from '../src/db/schema';
import { sqliteStore } from '../src/db/store';
import { pgStore } from '../src/db/pg/store';
import { migratePg } from '../src/db/pg/migrate';
import { exec, type Store } from '../src/db/work';
import { addBookmarkItem, createBookmarkGroup, findBookmarkGroupById } from '../src/bookmarks/bookmark.store';
import { newId } from '../src/ids';
import { startPostgres } from '../test/support/postgres';

const N = 20_000;
const ROUNDS = 5;
const db = openDatabase(':memory:');
migrate(db.$client);
const now = Date.now();
db.$client.run("INSERT INTO users (id, email, subscription_updated_at, created_at, updated_at) VALUES ('u', 'u@example.org', 1, 1, 1)");
db.$client.run("INSERT INTO conversations (id, owner_id, created_at, updated_at) VALUES ('c', 'u', 1, 1)");
const group = db.insert(bookmarkGroups).values({ id: 'g', userId: 'u', name: 'bench', createdAt: now, updatedAt: now }).returning().get();

/** Operations a second, timing `n` sequential calls. */
async function rate(n: number, call: () => unknown): Promise<number> {
  const start = Bun.nanoseconds();
  for (let i = 0; i < n; i++) await call();
  return n / ((Bun.nanoseconds() - start) / 1e9);
}

const store = sqliteStore(db);
const cases: { name: string; plain: () => unknown; work: () => unknown }[] = [
  {
    name: 'read by primary key',
    plain: () => db.select().from(bookmarkGroups).where(eq(bookmarkGroups.id, group.id)).get(),
    work: () => store.read((tx) => findBookmarkGroupById(tx, group.id)),
  },
  {
    name: 'write transaction (insert + update)',
    plain: () =>
      writeTx(db, (tx) => {
        const row = tx.insert(bookmarkItems).values({ id: newId(), groupId: group.id, conversationId: 'c', itemId: null, createdAt: now }).returning().get();
        tx.update(bookmarkGroups).set({ updatedAt: now }).where(eq(bookmarkGroups.id, group.id)).run();
        return row;
      }),
    work: () => store.write((tx) => addBookmarkItem(tx, { groupId: group.id, conversationId: 'c' }, now)),
  },
];

console.log(`SQLite (in memory), ${N} sequential calls a round, best of ${ROUNDS}:`);
for (const c of cases) {
  let plain = 0;
  let work = 0;
  for (let r = 0; r < ROUNDS; r++) {
    plain = Math.max(plain, await rate(N, c.plain));
    work = Math.max(work, await rate(N, c.work));
  }
  console.log(`  ${c.name}: plain ${Math.round(plain).toLocaleString('en')}/s, unit of work ${Math.round(work).toLocaleString('en')}/s, ratio ${(work / plain).toFixed(2)}`);
}

if (Bun.argv.includes('--pg')) {
  const pg = await startPostgres();
  const sql = new SQL({ url: pg.url, max: 4 });
  try {
    await migratePg(sql);
    const pgs: Store = pgStore(sql);
    await pgs.write(function* ({ db: d, t }) {
      yield* exec(d.insert(t.users).values({ id: 'u', email: 'u@example.org', subscriptionUpdatedAt: 1, createdAt: 1, updatedAt: 1 }));
      yield* exec(d.insert(t.conversations).values({ id: 'c', ownerId: 'u', createdAt: 1, updatedAt: 1 }));
    });
    const g = await pgs.write((tx) => createBookmarkGroup(tx, 'u', 'bench', now));
    const n = 2_000;
    const read = await rate(n, () => pgs.read((tx) => findBookmarkGroupById(tx, g.id)));
    const write = await rate(n, () => pgs.write((tx) => addBookmarkItem(tx, { groupId: g.id, conversationId: 'c' }, now)));
    console.log(`PostgreSQL (loopback, fsync off), ${n} sequential calls: read ${Math.round(read).toLocaleString('en')}/s, write transaction ${Math.round(write).toLocaleString('en')}/s`);
  } finally {
    await sql.close();
    await pg.stop();
  }
}
db.$client.close();
