import { and, eq, gt, like, lte, sql } from 'drizzle-orm';
import type { Lease } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/**
 * Take the lease `name` for `holder` until `now + ttlMs`, or renew it if `holder` has it. It is
 * taken only when nobody holds it or its holder let it expire; otherwise undefined. One statement
 * (an insert that updates on conflict, under a condition), so instances racing for a lease cannot
 * both win: on SQLite the write lock orders them, on PostgreSQL the conflicting row's lock does,
 * and the loser's condition is checked against the winner's row.
 */
export function* tryAcquireLease({ db, t }: Tx, name: string, holder: string, ttlMs: number, now: number): Work<Lease | undefined> {
  return yield* getRow(
    db
      .insert(t.leases)
      .values({ name, holder, acquiredAt: now, expiresAt: now + ttlMs })
      .onConflictDoUpdate({
        target: t.leases.name,
        set: {
          holder,
          expiresAt: now + ttlMs,
          // A renewal keeps when the lease was first taken.
          acquiredAt: sql`CASE WHEN ${t.leases.holder} = ${holder} THEN ${t.leases.acquiredAt} ELSE ${now} END`,
        },
        setWhere: sql`${t.leases.holder} = ${holder} OR ${t.leases.expiresAt} <= ${now}`,
      })
      .returning(),
  );
}

/** Give the lease up (only its holder can), so another instance may take it at once. */
export function* releaseLease({ db, t }: Tx, name: string, holder: string): Work<void> {
  yield* exec(db.delete(t.leases).where(and(eq(t.leases.name, name), eq(t.leases.holder, holder))));
}

export function* findLease({ db, t }: Tx, name: string): Work<Lease | undefined> {
  return yield* getRow(db.select().from(t.leases).where(eq(t.leases.name, name)));
}

/**
 * Take the lease whoever holds it (SQLite at start: the holder was this server's previous
 * process, which is gone, since one server at a time runs on an SQLite file).
 */
export function* takeOverLease({ db, t }: Tx, name: string, holder: string, ttlMs: number, now: number): Work<void> {
  yield* exec(
    db
      .insert(t.leases)
      .values({ name, holder, acquiredAt: now, expiresAt: now + ttlMs })
      .onConflictDoUpdate({ target: t.leases.name, set: { holder, acquiredAt: now, expiresAt: now + ttlMs } }),
  );
}

/** Renew every lease `holder` has whose name starts with `prefix`; returns the names it still has. */
export function* renewLeases({ db, t }: Tx, holder: string, prefix: string, ttlMs: number, now: number): Work<string[]> {
  const rows = yield* allRows(
    db
      .update(t.leases)
      .set({ expiresAt: now + ttlMs })
      .where(and(eq(t.leases.holder, holder), like(t.leases.name, `${prefix}%`), gt(t.leases.expiresAt, now)))
      .returning({ name: t.leases.name }),
  );
  return rows.map((r) => r.name);
}

/** Leases whose name starts with `prefix` that expired before `now`: work whose holder stopped renewing it. */
export function* listExpiredLeases({ db, t }: Tx, prefix: string, now: number): Work<Lease[]> {
  return yield* allRows(db.select().from(t.leases).where(and(like(t.leases.name, `${prefix}%`), lte(t.leases.expiresAt, now))));
}

/**
 * Take over an existing lease that has expired, for `holder`; false when it is gone (its work
 * ended) or held. Unlike `tryAcquireLease`, never makes a lease: work that finished and let its
 * lease go is not taken up again.
 */
export function* claimExpiredLease({ db, t }: Tx, name: string, holder: string, ttlMs: number, now: number): Work<boolean> {
  const rows = yield* allRows(
    db
      .update(t.leases)
      .set({ holder, acquiredAt: now, expiresAt: now + ttlMs })
      .where(and(eq(t.leases.name, name), lte(t.leases.expiresAt, now)))
      .returning({ name: t.leases.name }),
  );
  return rows.length > 0;
}
