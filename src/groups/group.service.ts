import { writeTx } from '../db/connection';
import { queuedWrite } from '../db/commit-queue';
import type { GroupChat, User } from '../db/schema';
import type { AppDeps } from '../deps';
import { appendItem } from '../chat/conversation.store';
import { addGroupMember, deleteGroupRows, findGroupById, removeGroupMember, setIntelligentResponses } from './group.store';
import { publishRecorded, recordGroupEvent, type RecordedEvent } from './group-events';
import { groupChatOf, groupMessageOf, type GroupMessage } from './group.view';

/*
 * Every change a subscriber must hear about follows one shape: one write transaction makes the
 * change and records its numbered event, then the event is published right after the commit,
 * synchronously, so the broker sees a group's events in id order.
 */

const memberOf = (u: Pick<User, 'id' | 'name' | 'image'>) => ({ id: u.id, name: u.name, image: u.image });

/**
 * Store the message and its `message.created` event, then publish. Through the commit queue:
 * messages sent at the same moment by many members share one transaction (src/db/commit-queue.ts).
 * `memberGroup` (the caller's membership check, which throws its own errors) runs inside that
 * transaction, so a member removed or a group deleted meanwhile cannot slip a message in.
 */
export async function sendGroupMessage(
  deps: AppDeps,
  memberGroup: () => GroupChat,
  sender: User,
  content: string,
): Promise<{ group: GroupChat; message: GroupMessage }> {
  const sent = await queuedWrite(
    deps.db,
    () => {
      // Taken when the message is stored, so `createdAt` follows the order of positions and ids.
      const now = deps.now();
      const group = memberGroup();
      const item = appendItem(deps.db, { conversationId: group.conversationId, role: 'user', content, authorId: sender.id }, now);
      const message = groupMessageOf(item, memberOf(sender));
      return { group, message, event: recordGroupEvent(deps.db, group.id, { type: 'message.created', message }, now) };
    },
    ({ group, event }) => publishRecorded(deps, group.id, event),
  );
  return { group: sent.group, message: sent.message };
}

/** Join (idempotent: joining twice changes nothing and publishes nothing). */
export function joinGroup(deps: AppDeps, group: GroupChat, user: User): GroupChat {
  const now = deps.now();
  const event = writeTx(deps.db, (tx): RecordedEvent | undefined => {
    if (!addGroupMember(tx, group, user.id, now)) return undefined;
    return recordGroupEvent(deps.db, group.id, { type: 'member.joined', member: memberOf(user) }, now);
  });
  if (event) publishRecorded(deps, group.id, event);
  return findGroupById(deps.db, group.id) ?? group;
}

export function leaveGroup(deps: AppDeps, group: GroupChat, user: User): boolean {
  const now = deps.now();
  const event = writeTx(deps.db, (tx): RecordedEvent | undefined => {
    if (!removeGroupMember(tx, group, user.id)) return undefined;
    return recordGroupEvent(deps.db, group.id, { type: 'member.left', member: memberOf(user) }, now);
  });
  if (event) publishRecorded(deps, group.id, event);
  return event !== undefined;
}

/**
 * The `group.deleted` event takes the next id but is not stored (its rows go with the group);
 * open streams receive it and close.
 */
export function deleteGroup(deps: AppDeps, group: GroupChat): void {
  const now = deps.now();
  const event = writeTx(deps.db, (tx) => {
    const ev = recordGroupEvent(deps.db, group.id, { type: 'group.deleted', groupChatId: group.id }, now, false);
    deleteGroupRows(tx, group);
    return ev;
  });
  publishRecorded(deps, group.id, event);
}

export function changeIntelligentResponses(deps: AppDeps, group: GroupChat, enabled: boolean): GroupChat {
  const now = deps.now();
  const { updated, event } = writeTx(deps.db, (tx) => {
    const event = recordGroupEvent(deps.db, group.id, { type: 'group.updated', groupChat: groupChatOf({ ...group, intelligentResponses: enabled, updatedAt: now }) }, now);
    const updated = setIntelligentResponses(tx, group.id, enabled, now)!;
    return { updated, event };
  });
  publishRecorded(deps, group.id, event);
  return updated;
}
