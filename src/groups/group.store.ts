import { randomBytes } from 'node:crypto';
import { and, desc, eq, gt, inArray, sql } from 'drizzle-orm';
import { writeTx, type Db } from '../db/connection';
import { groupChats, groupInvites, groupMembers, users, type GroupChat } from '../db/schema';
import { addWriter, createConversation, deleteConversation, removeWriter } from '../chat/conversation.store';
import { hashSecret } from '../auth/tokens';
import { newId } from '../ids';
import { preparedFor } from '../db/prepared';

/**
 * Create the group, its conversation (owned by the creator) and the creator's membership in one
 * transaction, so a crash never leaves a group without its conversation.
 */
export function createGroupChat(db: Db, input: { name: string; creatorId: string }, now = Date.now()): GroupChat {
  return writeTx(db, (tx) => {
    const conversation = createConversation(tx, { ownerId: input.creatorId, title: input.name }, now);
    addWriter(tx, conversation.id, input.creatorId, now);
    const group = tx
      .insert(groupChats)
      .values({ id: newId(), name: input.name, creatorId: input.creatorId, conversationId: conversation.id, createdAt: now, updatedAt: now })
      .returning()
      .get();
    tx.insert(groupMembers).values({ groupId: group.id, userId: input.creatorId, joinedAt: now }).run();
    return group;
  });
}

export const findGroupById = (db: Db, id: string): GroupChat | undefined => db.select().from(groupChats).where(eq(groupChats.id, id)).get();

/** The group a conversation belongs to, if it is a group's conversation. */
export const findGroupByConversationId = (db: Db, conversationId: string): GroupChat | undefined =>
  db.select().from(groupChats).where(eq(groupChats.conversationId, conversationId)).get();

/** The group chat of each of `conversationIds` that is a group's conversation (one query for a list page). */
export function groupIdsOfConversations(db: Db, conversationIds: string[]): Map<string, string> {
  if (!conversationIds.length) return new Map();
  const rows = db.select({ id: groupChats.id, conversationId: groupChats.conversationId }).from(groupChats).where(inArray(groupChats.conversationId, conversationIds)).all();
  return new Map(rows.map((r) => [r.conversationId, r.id]));
}

interface GroupForUserRow {
  id: string;
  name: string;
  creator_id: string;
  conversation_id: string;
  intelligent_responses: number;
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

/** The group and whether `userId` belongs to it, in one indexed lookup (the hot path of send and subscribe). */
export function findGroupForUser(db: Db, groupId: string, userId: string): { group: GroupChat; isMember: boolean } | undefined {
  const r = hot(db).groupForUser.get(groupId, userId);
  if (!r) return undefined;
  const group: GroupChat = {
    id: r.id,
    name: r.name,
    creatorId: r.creator_id,
    conversationId: r.conversation_id,
    intelligentResponses: r.intelligent_responses === 1,
    lastSeq: r.last_seq,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
  return { group, isMember: r.is_member === 1 };
}

export const listGroupsOfUser = (db: Db, userId: string): GroupChat[] =>
  db
    .select({ group: groupChats })
    .from(groupChats)
    .innerJoin(groupMembers, and(eq(groupMembers.groupId, groupChats.id), eq(groupMembers.userId, userId)))
    .orderBy(desc(groupChats.updatedAt), desc(groupChats.id))
    .all()
    .map((r) => r.group);

/** How many members each of `groupIds` has, in one query (the caller's list of groups). */
export function memberCountsOf(db: Db, groupIds: string[]): Map<string, number> {
  if (!groupIds.length) return new Map();
  const rows = db
    .select({ groupId: groupMembers.groupId, n: sql<number>`count(*)` })
    .from(groupMembers)
    .where(inArray(groupMembers.groupId, groupIds))
    .groupBy(groupMembers.groupId)
    .all();
  return new Map(rows.map((r) => [r.groupId, r.n]));
}

export const listGroupMembers = (db: Db, groupId: string) =>
  db
    .select({ id: users.id, name: users.name, image: users.image, joinedAt: groupMembers.joinedAt })
    .from(groupMembers)
    .innerJoin(users, eq(users.id, groupMembers.userId))
    .where(eq(groupMembers.groupId, groupId))
    .orderBy(groupMembers.joinedAt, users.id)
    .all();

/** Add a member and make them a writer of the group's conversation. False when already a member. */
export function addGroupMember(tx: Db, group: GroupChat, userId: string, now = Date.now()): boolean {
  const added = tx.insert(groupMembers).values({ groupId: group.id, userId, joinedAt: now }).onConflictDoNothing().returning().get();
  if (!added) return false;
  addWriter(tx, group.conversationId, userId, now);
  return true;
}

export function removeGroupMember(tx: Db, group: GroupChat, userId: string): boolean {
  const removed = tx
    .delete(groupMembers)
    .where(and(eq(groupMembers.groupId, group.id), eq(groupMembers.userId, userId)))
    .returning()
    .get();
  if (!removed) return false;
  removeWriter(tx, group.conversationId, userId);
  return true;
}

/**
 * Remove the group and its conversation. Foreign keys cascade the rest: members, invites and
 * stored events go with the group, items and writers with the conversation.
 */
export function deleteGroupRows(tx: Db, group: GroupChat): void {
  tx.delete(groupChats).where(eq(groupChats.id, group.id)).run();
  deleteConversation(tx, group.conversationId);
}

export function setIntelligentResponses(tx: Db, groupId: string, enabled: boolean, now = Date.now()): GroupChat | undefined {
  return tx.update(groupChats).set({ intelligentResponses: enabled, updatedAt: now }).where(eq(groupChats.id, groupId)).returning().get();
}

/** 96 random bits, base64url (16 characters): short enough to paste, far too many to guess. */
const newInviteCode = () => randomBytes(12).toString('base64url');

export function createGroupInvite(db: Db, input: { groupId: string; createdBy: string; ttlMs: number }, now = Date.now()) {
  const code = newInviteCode();
  const expiresAt = now + input.ttlMs;
  db.insert(groupInvites).values({ codeHash: hashSecret(code), groupId: input.groupId, createdBy: input.createdBy, createdAt: now, expiresAt }).run();
  return { code, expiresAt };
}

/** The group an unexpired invite code opens, if any. */
export function findGroupByInvite(db: Db, code: string, now = Date.now()): GroupChat | undefined {
  return db
    .select({ group: groupChats })
    .from(groupInvites)
    .innerJoin(groupChats, eq(groupChats.id, groupInvites.groupId))
    .where(and(eq(groupInvites.codeHash, hashSecret(code)), gt(groupInvites.expiresAt, now)))
    .get()?.group;
}
