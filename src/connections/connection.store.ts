import { asc, eq, sql } from 'drizzle-orm';
import type { ConnectionRow, ModelSettingRow } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts) on `connections`, `model_settings` and `server_settings`: the
// admin operations, the CLI and the env seeding share them.

export type NewConnection = Pick<ConnectionRow, 'name' | 'kind' | 'api' | 'baseUrl' | 'credential' | 'options' | 'enabled' | 'source' | 'allowPrivate'>;
export type ConnectionChange = Partial<Pick<ConnectionRow, 'name' | 'api' | 'baseUrl' | 'credential' | 'options' | 'enabled' | 'allowPrivate'>>;

export function* listConnectionRows({ db, t }: Tx): Work<ConnectionRow[]> {
  return yield* allRows(db.select().from(t.connections).orderBy(asc(t.connections.kind), asc(t.connections.name)));
}

export function* findConnection({ db, t }: Tx, idOrName: string): Work<ConnectionRow | undefined> {
  const byId = yield* getRow(db.select().from(t.connections).where(eq(t.connections.id, idOrName)));
  return byId ?? (yield* getRow(db.select().from(t.connections).where(eq(t.connections.name, idOrName))));
}

export function* insertConnection({ db, t }: Tx, input: NewConnection, now: number): Work<ConnectionRow> {
  return (yield* getRow(db.insert(t.connections).values({ ...input, id: newId(), createdAt: now, updatedAt: now, version: 1 }).returning()))!;
}

/** Inserted unless its name is taken meanwhile (instances starting at once seed the same env rows). */
export function* insertConnectionOnce({ db, t }: Tx, input: NewConnection, now: number): Work<boolean> {
  const rows = yield* allRows(
    db
      .insert(t.connections)
      .values({ ...input, id: newId(), createdAt: now, updatedAt: now, version: 1 })
      .onConflictDoNothing({ target: t.connections.name })
      .returning({ id: t.connections.id }),
  );
  return rows.length > 0;
}

/** Applies `change` and bumps the version (every instance's cached adapter for it goes stale). */
export function* updateConnectionRow({ db, t }: Tx, id: string, change: ConnectionChange, now: number): Work<ConnectionRow | undefined> {
  return yield* getRow(
    db
      .update(t.connections)
      .set({ ...change, updatedAt: now, version: sql`${t.connections.version} + 1` })
      .where(eq(t.connections.id, id))
      .returning(),
  );
}

/** Its model settings go with it (cascade). */
export function* deleteConnection({ db, t }: Tx, id: string): Work<boolean> {
  return (yield* allRows(db.delete(t.connections).where(eq(t.connections.id, id)).returning({ id: t.connections.id }))).length > 0;
}

export function* listModelSettingRows({ db, t }: Tx): Work<ModelSettingRow[]> {
  return yield* allRows(db.select().from(t.modelSettings));
}

export type ModelSettingInput = Omit<ModelSettingRow, 'updatedAt'>;

export function* upsertModelSetting({ db, t }: Tx, row: ModelSettingInput, now: number): Work<void> {
  const { connectionId, model, ...rest } = row;
  yield* exec(
    db
      .insert(t.modelSettings)
      .values({ ...row, updatedAt: now })
      .onConflictDoUpdate({ target: [t.modelSettings.connectionId, t.modelSettings.model], set: { ...rest, updatedAt: now } }),
  );
}

export function* readServerSetting<T>({ db, t }: Tx, key: string): Work<T | undefined> {
  const row = yield* getRow(db.select().from(t.serverSettings).where(eq(t.serverSettings.key, key)));
  return row?.value as T | undefined;
}

export function* writeServerSetting({ db, t }: Tx, key: string, value: unknown, now: number): Work<void> {
  yield* exec(db.insert(t.serverSettings).values({ key, value, updatedAt: now }).onConflictDoUpdate({ target: t.serverSettings.key, set: { value, updatedAt: now } }));
}
