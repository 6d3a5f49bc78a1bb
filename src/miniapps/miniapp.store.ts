import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { MiniApp } from '../db/schema';
import { allRows, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';
import { nameKeyOf } from './miniapp.rules';

// Units of work (src/db/work.ts), on SQLite or PostgreSQL alike. Values arrive checked (miniapp.rules.ts).

export interface MiniAppFields {
  name: string;
  url: string;
  iconUrl: string | null;
  description: string | null;
}

/** The catalogue in the admin's order: by position, then by name. */
export function* listMiniApps({ db, t }: Tx): Work<MiniApp[]> {
  return yield* allRows(db.select().from(t.miniApps).orderBy(asc(t.miniApps.position), asc(t.miniApps.nameKey), asc(t.miniApps.id)));
}

export function* findMiniAppById({ db, t }: Tx, id: string): Work<MiniApp | undefined> {
  return yield* getRow(db.select().from(t.miniApps).where(eq(t.miniApps.id, id)));
}

/** Another app with this name (in any case), if there is one. */
export function* findMiniAppNamed({ db, t }: Tx, name: string, exceptId?: string): Work<MiniApp | undefined> {
  const key = eq(t.miniApps.nameKey, nameKeyOf(name));
  return yield* getRow(db.select().from(t.miniApps).where(exceptId ? and(key, ne(t.miniApps.id, exceptId)) : key));
}

/** Without a position, the app goes after the last one. */
export function* createMiniApp({ db, t }: Tx, fields: MiniAppFields & { position?: number }, now: number): Work<MiniApp> {
  const position = fields.position ?? (yield* getRow(db.select({ next: sql<number>`coalesce(max(${t.miniApps.position}), 0) + 1`.mapWith(Number) }).from(t.miniApps)))!.next;
  const row = { id: newId(), ...fields, nameKey: nameKeyOf(fields.name), position, createdAt: now, updatedAt: now };
  return (yield* getRow(db.insert(t.miniApps).values(row).returning()))!;
}

export function* updateMiniApp({ db, t }: Tx, id: string, patch: Partial<MiniAppFields & { position: number }>, now: number): Work<MiniApp | undefined> {
  const set = { ...patch, ...(patch.name !== undefined ? { nameKey: nameKeyOf(patch.name) } : {}), updatedAt: now };
  return yield* getRow(db.update(t.miniApps).set(set).where(eq(t.miniApps.id, id)).returning());
}

export function* removeMiniApp({ db, t }: Tx, id: string): Work<boolean> {
  return (yield* allRows(db.delete(t.miniApps).where(eq(t.miniApps.id, id)).returning({ id: t.miniApps.id }))).length > 0;
}
