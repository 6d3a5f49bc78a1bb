import { and, asc, count, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { McpServerRow, McpTokenRow } from '../db/schema';
import { allRows, exec, getRow, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts) on `mcp_servers` and `mcp_tokens`: the operations, the CLI and
// the tool source share them.

export type NewMcpServer = Pick<McpServerRow, 'ownerId' | 'name' | 'transport' | 'url' | 'command' | 'secrets' | 'auth' | 'oauthClientId' | 'oauthClient' | 'approval' | 'timeoutS' | 'enabled'>;
export type McpServerChange = Partial<Omit<NewMcpServer, 'ownerId' | 'transport'>>;

/** The admin's servers (`ownerId` null), or one user's own. */
export function* listMcpServerRows({ db, t }: Tx, ownerId: string | null): Work<McpServerRow[]> {
  const owner = ownerId === null ? isNull(t.mcpServers.ownerId) : eq(t.mcpServers.ownerId, ownerId);
  return yield* allRows(db.select().from(t.mcpServers).where(owner).orderBy(asc(t.mcpServers.name)));
}

/** What a user may use: the admin's enabled servers and their own. */
export function* listUsableMcpServers({ db, t }: Tx, userId: string): Work<McpServerRow[]> {
  return yield* allRows(
    db
      .select()
      .from(t.mcpServers)
      .where(and(eq(t.mcpServers.enabled, true), or(isNull(t.mcpServers.ownerId), eq(t.mcpServers.ownerId, userId))))
      .orderBy(asc(t.mcpServers.name)),
  );
}

/** What a user's settings list: the admin's enabled servers and every one of their own, off ones too (to turn back on). */
export function* listVisibleMcpServers({ db, t }: Tx, userId: string): Work<McpServerRow[]> {
  return yield* allRows(
    db
      .select()
      .from(t.mcpServers)
      .where(or(and(eq(t.mcpServers.enabled, true), isNull(t.mcpServers.ownerId)), eq(t.mcpServers.ownerId, userId)))
      .orderBy(asc(t.mcpServers.name)),
  );
}

export function* findMcpServer({ db, t }: Tx, id: string): Work<McpServerRow | undefined> {
  return yield* getRow(db.select().from(t.mcpServers).where(eq(t.mcpServers.id, id)));
}

/** The servers among `ids` that exist (an assistant's choice, src/assistants/assistant-resources.ts). */
export function* findMcpServersByIds({ db, t }: Tx, ids: readonly string[]): Work<McpServerRow[]> {
  if (!ids.length) return [];
  return yield* allRows(db.select().from(t.mcpServers).where(inArray(t.mcpServers.id, [...ids])));
}

/** By id, or by name among the admin's servers (`ownerId` null) or one user's. */
export function* findMcpServerByRef(tx: Tx, ref: string, ownerId: string | null): Work<McpServerRow | undefined> {
  const { db, t } = tx;
  const byId = yield* findMcpServer(tx, ref);
  if (byId && byId.ownerId === ownerId) return byId;
  const owner = ownerId === null ? isNull(t.mcpServers.ownerId) : eq(t.mcpServers.ownerId, ownerId);
  return yield* getRow(db.select().from(t.mcpServers).where(and(owner, eq(t.mcpServers.name, ref))));
}

/** A name a user would see twice: the admin's, or this user's own. */
export function* mcpNameTaken({ db, t }: Tx, name: string, ownerId: string | null, exceptId?: string): Work<boolean> {
  const owner = ownerId === null ? sql`true` : or(isNull(t.mcpServers.ownerId), eq(t.mcpServers.ownerId, ownerId));
  const rows = yield* allRows(db.select({ id: t.mcpServers.id }).from(t.mcpServers).where(and(eq(t.mcpServers.name, name), owner)));
  return rows.some((r) => r.id !== exceptId);
}

export function* countUserMcpServers({ db, t }: Tx, userId: string): Work<number> {
  const row = yield* getRow(db.select({ n: count() }).from(t.mcpServers).where(eq(t.mcpServers.ownerId, userId)));
  return Number(row?.n ?? 0);
}

export function* insertMcpServer({ db, t }: Tx, input: NewMcpServer, now: number): Work<McpServerRow> {
  return (yield* getRow(db.insert(t.mcpServers).values({ ...input, id: newId(), createdAt: now, updatedAt: now, version: 1 }).returning()))!;
}

/** Applies `change` and moves the version: every instance closes its connections to the server. */
export function* updateMcpServerRow({ db, t }: Tx, id: string, change: McpServerChange, now: number): Work<McpServerRow | undefined> {
  return yield* getRow(
    db
      .update(t.mcpServers)
      .set({ ...change, updatedAt: now, version: sql`${t.mcpServers.version} + 1` })
      .where(eq(t.mcpServers.id, id))
      .returning(),
  );
}

/** Its users' tokens go with it (cascade). */
export function* deleteMcpServer({ db, t }: Tx, id: string): Work<void> {
  yield* exec(db.delete(t.mcpServers).where(eq(t.mcpServers.id, id)));
}

/** The client a dynamic registration gave, kept for the next user's sign-in; the version does not move. */
export function* saveRegisteredClient({ db, t }: Tx, id: string, sealedClient: string): Work<void> {
  yield* exec(db.update(t.mcpServers).set({ oauthClient: sealedClient }).where(and(eq(t.mcpServers.id, id), isNull(t.mcpServers.oauthClientId))));
}

// --- tokens ---

export function* findMcpToken({ db, t }: Tx, serverId: string, userId: string): Work<McpTokenRow | undefined> {
  return yield* getRow(db.select().from(t.mcpTokens).where(and(eq(t.mcpTokens.serverId, serverId), eq(t.mcpTokens.userId, userId))));
}

export function* listUserMcpTokens({ db, t }: Tx, userId: string): Work<McpTokenRow[]> {
  return yield* allRows(db.select().from(t.mcpTokens).where(eq(t.mcpTokens.userId, userId)));
}

export function* findMcpFlow({ db, t }: Tx, stateHash: string): Work<McpTokenRow | undefined> {
  return yield* getRow(db.select().from(t.mcpTokens).where(eq(t.mcpTokens.flowState, stateHash)));
}

type TokenChange = Partial<Pick<McpTokenRow, 'tokens' | 'expiresAt' | 'flowState' | 'flow' | 'flowExpiresAt'>>;

export function* upsertMcpToken({ db, t }: Tx, serverId: string, userId: string, change: TokenChange, now: number): Work<void> {
  yield* exec(
    db
      .insert(t.mcpTokens)
      .values({ serverId, userId, ...change, updatedAt: now })
      .onConflictDoUpdate({ target: [t.mcpTokens.serverId, t.mcpTokens.userId], set: { ...change, updatedAt: now } }),
  );
}

export function* deleteMcpToken({ db, t }: Tx, serverId: string, userId: string): Work<void> {
  yield* exec(db.delete(t.mcpTokens).where(and(eq(t.mcpTokens.serverId, serverId), eq(t.mcpTokens.userId, userId))));
}
