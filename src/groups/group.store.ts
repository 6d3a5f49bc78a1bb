import { randomBytes } from 'node:crypto';
import { and, desc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { GroupChat } from '../db/schema';
import { addWriter, createConversation, deleteConversation, removeWriter } from '../chat/conversation.store';
import { hashSecret } from '../auth/tokens';
import { newId } from '../ids';
import { preparedFor } from '../db/prepared';
import { allRows, countRows, exec, getRow, hotOr, rawRows, type Tx, type Work } from '../db/work';

// Units of work (src/db/work.ts): run by `deps.store`, on SQLite or PostgreSQL alike.

/**
 * Create the group, its conversation (owned by the creator) and the creator's membership (run
 * with `store.write`: one transaction, so a crash never leaves a group without its conversation).
 */
export function* createGroupChat(tx: Tx, input: { name: string; creatorId: string }, now = Date.now()): Work<GroupChat> {
  const { db, t } = tx;
  const conversation = yield* createConversation(tx, { ownerId: input.creatorId, title: input.name }, now);
  yield* addWriter(tx, conversation.id, input.creatorId, now);
  const group = yield* getRow(
    db
      .insert(t.groupChats)
      .values({ id: newId(), name: input.name, creatorId: input.creatorId, conversationId: conversation.id, createdAt: now, updatedAt: now })
      .returning(),
  );
  yield* exec(db.insert(t.groupMembers).values({ groupId: group!.id, userId: input.creatorId, joinedAt: now }));
  return group!;
}

export function* findGroupById({ db, t }: Tx, id: string): Work<GroupChat | undefined> {
  return yield* getRow(db.select().from(t.groupChats).where(eq(t.groupChats.id, id)));
}

/** The group a conversation belongs to, if it is a group's conversation. */
export function* findGroupByConversationId({ db, t }: Tx, conversationId: string): Work<GroupChat | undefined> {
  return yield* getRow(db.select().from(t.groupChats).where(eq(t.groupChats.conversationId, conversationId)));
}

/** The group chat of each of `conversationIds` that is a group's conversation (one query for a list page). */
export function* groupIdsOfConversations({ db, t }: Tx, conversationIds: string[]): Work<Map<string, string>> {
  if (!conversationIds.length) return new Map();
  const rows = yield* allRows(
    db.select({ id: t.groupChats.id, conversationId: t.groupChats.conversationId }).from(t.groupChats).where(inArray(t.groupChats.conversationId, conversationIds)),
  );
  return new Map(rows.map((r) => [r.conversationId, r.id]));
}

interface GroupForUserRow {
  id: string;
  name: string;
  creator_id: string;
  conversation_id: string;
  intelligent_responses: number;
  model: string | null;
  assistant_id: string | null;
  last_seq: number;
  created_at: number;
  updated_at: number;
  is_member: number;
}

// A plain SQLite statement rather than drizzle's prepared query: this runs for every group
// message, and drizzle's placeholder filling and nested row mapping were ~3 % of the send.
const hot = preparedFor((db) => ({
  groupForUser: db.$client.prepare<GroupForUserRow, [string, string]>(
    `SELECT g.*, EXISTS (SELECT 1 FROM group_members m WHERE m.group_id = g.id AND m.user_id = ?2) AS is_member
     FROM group_chats g WHERE g.id = ?1`,
  ),
}));

type GroupForUser = { group: GroupChat; isMember: boolean };

/** The group and whether `userId` belongs to it, in one indexed lookup (the hot path of send and subscribe). */
export function* findGroupForUser(tx: Tx, groupId: string, userId: string): Work<GroupForUser | undefined> {
  return yield* hotOr(
    tx,
    (d) => groupForUserOn(d, groupId, userId),
    () => groupForUserPg(tx, groupId, userId),
  );
}

/**
 * `findGroupForUser` for a write that records an event (sending a message): on PostgreSQL the
 * group's row is locked first (`lockGroup`) and the membership read after, by a statement of its
 * own, so it sees a member's leaving (or the group's deletion) that committed while this waited:
 * a message cannot slip in after its sender's `member.left`. On SQLite the one lookup.
 */
export function* lockGroupForUser(tx: Tx, groupId: string, userId: string): Work<GroupForUser | undefined> {
  return yield* hotOr(
    tx,
    (d) => groupForUserOn(d, groupId, userId),
    function* () {
      return (yield* lockGroup(tx, groupId)) ? yield* groupForUserPg(tx, groupId, userId) : undefined;
    },
  );
}

function groupForUserOn(db: Tx['db'], groupId: string, userId: string): GroupForUser | undefined {
  const r = hot(db).groupForUser.get(groupId, userId);
  if (!r) return undefined;
  const group: GroupChat = {
    id: r.id,
    name: r.name,
    creatorId: r.creator_id,
    conversationId: r.conversation_id,
    intelligentResponses: r.intelligent_responses === 1,
    model: r.model,
    assistantId: r.assistant_id,
    lastSeq: r.last_seq,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
  return { group, isMember: r.is_member === 1 };
}

function* groupForUserPg({ db, t }: Tx, groupId: string, userId: string): Work<GroupForUser | undefined> {
  const m = t.groupMembers;
  const isMember = sql<boolean>`EXISTS (SELECT 1 FROM ${m} WHERE ${m.groupId} = ${t.groupChats.id} AND ${m.userId} = ${userId})`.mapWith(Boolean);
  return yield* getRow(db.select({ group: t.groupChats, isMember }).from(t.groupChats).where(eq(t.groupChats.id, groupId)));
}

/**
 * Lock the group's row until the write transaction ends, and say whether the group exists. On
 * PostgreSQL every write that records a group event takes this lock first: they then queue per
 * group, and always lock the group before the conversation (a message takes its position, a
 * deletion removes it), so two of them never wait for each other's rows. Taken with
 * `FOR NO KEY UPDATE`, as the seq's UPDATE would: inserting rows that refer to the group is not
 * held up. On SQLite, whose one writer already runs write transactions one at a time, a lookup.
 */
export function* lockGroup(tx: Tx, groupId: string): Work<boolean> {
  const { db, t } = tx;
  if (tx.dialect === 'pg') return (yield* rawRows(sql`SELECT 1 AS one FROM ${t.groupChats} WHERE ${t.groupChats.id} = ${groupId} FOR NO KEY UPDATE`)).length > 0;
  return (yield* getRow(db.select({ id: t.groupChats.id }).from(t.groupChats).where(eq(t.groupChats.id, groupId)))) !== undefined;
}

export function* listGroupsOfUser({ db, t }: Tx, userId: string): Work<GroupChat[]> {
  const rows = yield* allRows(
    db
      .select({ group: t.groupChats })
      .from(t.groupChats)
      .innerJoin(t.groupMembers, and(eq(t.groupMembers.groupId, t.groupChats.id), eq(t.groupMembers.userId, userId)))
      .orderBy(desc(t.groupChats.updatedAt), desc(t.groupChats.id)),
  );
  return rows.map((r) => r.group);
}

/** How many members each of `groupIds` has, in one query (the caller's list of groups). */
export function* memberCountsOf({ db, t }: Tx, groupIds: string[]): Work<Map<string, number>> {
  if (!groupIds.length) return new Map();
  const m = t.groupMembers;
  // PostgreSQL's count is a bigint: a number either way.
  const rows = yield* allRows(db.select({ groupId: m.groupId, n: sql<number>`count(*)`.mapWith(Number) }).from(m).where(inArray(m.groupId, groupIds)).groupBy(m.groupId));
  return new Map(rows.map((r) => [r.groupId, r.n]));
}

export function* listGroupMembers({ db, t }: Tx, groupId: string) {
  return yield* allRows(
    db
      .select({ id: t.users.id, name: t.users.name, image: t.users.image, joinedAt: t.groupMembers.joinedAt })
      .from(t.groupMembers)
      .innerJoin(t.users, eq(t.users.id, t.groupMembers.userId))
      .where(eq(t.groupMembers.groupId, groupId))
      .orderBy(t.groupMembers.joinedAt, t.users.id),
  );
}

/** The group chats a user belongs to, made or joined (their cap: PARLEY_GROUPS_MAX_PER_USER). */
export const countGroupsOfUser = (tx: Tx, userId: string) => countRows(tx, tx.t.groupMembers, eq(tx.t.groupMembers.userId, userId));

export function* isGroupMember(tx: Tx, groupId: string, userId: string): Work<boolean> {
  return (yield* countRows(tx, tx.t.groupMembers, and(eq(tx.t.groupMembers.groupId, groupId), eq(tx.t.groupMembers.userId, userId)))) > 0;
}

/** Add a member and make them a writer of the group's conversation. False when already a member. */
export function* addGroupMember(tx: Tx, group: GroupChat, userId: string, now = Date.now()): Work<boolean> {
  const { db, t } = tx;
  const added = yield* getRow(db.insert(t.groupMembers).values({ groupId: group.id, userId, joinedAt: now }).onConflictDoNothing().returning());
  if (!added) return false;
  yield* addWriter(tx, group.conversationId, userId, now);
  return true;
}

export function* removeGroupMember(tx: Tx, group: GroupChat, userId: string): Work<boolean> {
  const { db, t } = tx;
  const removed = yield* getRow(
    db
      .delete(t.groupMembers)
      .where(and(eq(t.groupMembers.groupId, group.id), eq(t.groupMembers.userId, userId)))
      .returning(),
  );
  if (!removed) return false;
  yield* removeWriter(tx, group.conversationId, userId);
  return true;
}

/**
 * Remove the group and its conversation. Foreign keys cascade the rest: members, invites and
 * stored events go with the group, items and writers with the conversation.
 */
export function* deleteGroupRows(tx: Tx, group: GroupChat): Work<void> {
  const { db, t } = tx;
  yield* exec(db.delete(t.groupChats).where(eq(t.groupChats.id, group.id)));
  yield* deleteConversation(tx, group.conversationId);
}

/** What the creator may change about a group: whether the assistant answers, with which model, and which shared assistant answers `@ai`. */
export type GroupSettings = Partial<Pick<GroupChat, 'intelligentResponses' | 'model' | 'assistantId'>>;

export function* updateGroupSettings({ db, t }: Tx, groupId: string, settings: GroupSettings, now = Date.now()): Work<GroupChat | undefined> {
  return yield* getRow(db.update(t.groupChats).set({ ...settings, updatedAt: now }).where(eq(t.groupChats.id, groupId)).returning());
}

/** 96 random bits, base64url (16 characters): short enough to paste, far too many to guess. */
const newInviteCode = () => randomBytes(12).toString('base64url');

export function* createGroupInvite({ db, t }: Tx, input: { groupId: string; createdBy: string; ttlMs: number }, now = Date.now()): Work<{ code: string; expiresAt: number }> {
  const code = newInviteCode();
  const expiresAt = now + input.ttlMs;
  yield* exec(db.insert(t.groupInvites).values({ codeHash: hashSecret(code), groupId: input.groupId, createdBy: input.createdBy, createdAt: now, expiresAt }));
  return { code, expiresAt };
}

/** Invite codes a user made that have not expired (their cap: PARLEY_GROUP_INVITES_MAX_PER_USER). */
export const countLiveInvitesBy = (tx: Tx, userId: string, now: number) =>
  countRows(tx, tx.t.groupInvites, and(eq(tx.t.groupInvites.createdBy, userId), gt(tx.t.groupInvites.expiresAt, now)));

/** The group an unexpired invite code opens, if any. */
export function* findGroupByInvite({ db, t }: Tx, code: string, now = Date.now()): Work<GroupChat | undefined> {
  const row = yield* getRow(
    db
      .select({ group: t.groupChats })
      .from(t.groupInvites)
      .innerJoin(t.groupChats, eq(t.groupChats.id, t.groupInvites.groupId))
      .where(and(eq(t.groupInvites.codeHash, hashSecret(code)), gt(t.groupInvites.expiresAt, now))),
  );
  return row?.group;
}
