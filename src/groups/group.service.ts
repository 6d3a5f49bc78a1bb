import type { GroupChat, User } from '../db/schema';
import type { AppDeps } from '../deps';
import { afterCommit, type Tx, type Work } from '../db/work';
import { appendItem } from '../chat/conversation.store';
import { addGroupMember, countGroupsOfUser, deleteGroupRows, findGroupById, isGroupMember, lockGroup, removeGroupMember, updateGroupSettings, type GroupSettings } from './group.store';
import { checkCap } from '../http/user-caps';
import { AppError } from '../http/errors';
import { publishRecorded, recordGroupEvent } from './group-events';
import { groupChatOf, groupMessageOf, type GroupMessage } from './group.view';

/*
 * Every change a subscriber must hear about follows one shape: one write transaction makes the
 * change and records its numbered event, and the event is published right after the commit
 * (`afterCommit`), synchronously, so the broker sees a group's events in id order. On PostgreSQL
 * each of these writes first locks the group's row (`lockGroup`): they queue per group, and
 * never wait for each other's rows.
 */

const memberOf = (u: Pick<User, 'id' | 'name' | 'image'>) => ({ id: u.id, name: u.name, image: u.image });

/**
 * Store the message and its `message.created` event, then publish. Through the commit queue
 * (`store.queued`): messages sent at the same moment by many members share one transaction on
 * SQLite (src/db/commit-queue.ts). `memberGroup` (the caller's membership check, which throws its
 * own errors; `lockGroupForUser`, which locks the group first on PostgreSQL) runs inside that
 * transaction, so a member removed or a group deleted meanwhile cannot slip a message in.
 */
export async function sendGroupMessage(
  deps: AppDeps,
  memberGroup: (tx: Tx) => Work<GroupChat>,
  sender: User,
  content: string,
): Promise<{ group: GroupChat; message: GroupMessage }> {
  return deps.store.queued(function* (tx) {
    const group = yield* memberGroup(tx);
    // Taken when the message is stored (the group locked), so `createdAt` follows the order of positions and ids.
    const now = deps.now();
    const item = yield* appendItem(tx, { conversationId: group.conversationId, role: 'user', content, authorId: sender.id }, now);
    const message = groupMessageOf(item, memberOf(sender));
    const event = yield* recordGroupEvent(tx, group.id, { type: 'message.created', message }, now);
    yield* afterCommit(() => publishRecorded(deps, group.id, event));
    return { group, message };
  });
}

/** Refuses (409) a user who belongs to PARLEY_GROUPS_MAX_PER_USER groups already: made or joined alike. */
export function* checkGroupsCap(tx: Tx, userId: string, max: number): Work<void> {
  yield* checkCap(tx, 'groupsMaxPerUser', userId, max, countGroupsOfUser(tx, userId), (n) => [`You belong to ${n} group chats`, 'Leave or delete one first.']);
}

/**
 * Join (idempotent: joining twice changes nothing and publishes nothing), within the caller's cap on
 * groups. Undefined when the group was deleted meanwhile.
 */
export async function joinGroup(deps: AppDeps, group: GroupChat, user: User): Promise<GroupChat | undefined> {
  const now = deps.now();
  return deps.store.write(function* (tx) {
    if (!(yield* lockGroup(tx, group.id))) return undefined;
    if (!(yield* isGroupMember(tx, group.id, user.id))) yield* checkGroupsCap(tx, user.id, deps.config.groupsMaxPerUser);
    if (yield* addGroupMember(tx, group, user.id, now)) {
      const event = yield* recordGroupEvent(tx, group.id, { type: 'member.joined', member: memberOf(user) }, now);
      yield* afterCommit(() => publishRecorded(deps, group.id, event));
    }
    return (yield* findGroupById(tx, group.id)) ?? group;
  });
}

export async function leaveGroup(deps: AppDeps, group: GroupChat, user: User): Promise<boolean> {
  const now = deps.now();
  return deps.store.write(function* (tx) {
    if (!(yield* lockGroup(tx, group.id)) || !(yield* removeGroupMember(tx, group, user.id))) return false;
    const event = yield* recordGroupEvent(tx, group.id, { type: 'member.left', member: memberOf(user) }, now);
    yield* afterCommit(() => publishRecorded(deps, group.id, event));
    return true;
  });
}

/**
 * The `group.deleted` event takes the next id but is not stored (its rows go with the group);
 * open streams receive it and close. False when the group was already gone.
 */
export async function deleteGroup(deps: AppDeps, group: GroupChat): Promise<boolean> {
  const now = deps.now();
  return deps.store.write(function* (tx) {
    if (!(yield* lockGroup(tx, group.id))) return false;
    const event = yield* recordGroupEvent(tx, group.id, { type: 'group.deleted', groupChatId: group.id }, now, false);
    yield* deleteGroupRows(tx, group);
    yield* afterCommit(() => publishRecorded(deps, group.id, event));
    return true;
  });
}

/** The group as changed; undefined when it was deleted meanwhile. */
export async function changeGroupSettings(deps: AppDeps, group: GroupChat, settings: GroupSettings): Promise<GroupChat | undefined> {
  const now = deps.now();
  return deps.store.write(function* (tx) {
    if (!(yield* lockGroup(tx, group.id))) return undefined;
    // The row as written (after the lock), so a change of the other setting meanwhile is not undone in the event.
    const updated = yield* updateGroupSettings(tx, group.id, settings, now);
    if (!updated) return undefined;
    const event = yield* recordGroupEvent(tx, group.id, { type: 'group.updated', groupChat: groupChatOf(updated) }, now);
    yield* afterCommit(() => publishRecorded(deps, group.id, event));
    return updated;
  });
}

/**
 * The model a group's creator chose, checked as a turn checks it (unknown, hidden, disabled, not in
 * their tier: a 400 saying which) and kept as its catalogue id, whichever way it was named.
 */
export async function checkGroupModel(deps: AppDeps, model: string, creator: Pick<User, 'subscriptionTier'>): Promise<string> {
  const target = await deps.connections.chat(model, 'group', { subscriptionTier: creator.subscriptionTier });
  if (!target) throw new AppError('BAD_REQUEST', { message: 'No AI server is connected: an administrator must add one before a model can be chosen.' });
  return target.id;
}
