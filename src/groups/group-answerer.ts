import type { Assistant, GroupChat } from '../db/schema';
import type { AppDeps } from '../deps';
import { AppError } from '../http/errors';
import { findUser } from '../account/account.store';
import { canUseAssistant, findAssistantById, listAssistantsFor } from '../assistants/assistant.store';
import type { GroupMessage } from './group.view';

/*
 * Who answers a group message (docs/groups.md, "Assistants in a group"): the message addresses
 * `@ai` (the configured handle), which the group's assistant answers (or Parley's own), or it
 * mentions a shared assistant by name, which answers itself. One answer per message: the first
 * mention in the text decides. A name that is no assistant's is a plain mention of a person.
 */

/** Who answers, and in whose subscription tier its model is checked. */
export interface Answerer {
  /** Undefined: Parley's own. */
  assistant?: Assistant;
  /** The user whose tier the assistant's model must be in: the group's creator for `@ai`, the member who mentioned it otherwise. */
  tierOf: string;
}

/** `@ai` (or the configured handle) as a word of its own, in any case. */
export const mentionsAssistant = (text: string, handle: string): boolean => firstMention(text, [{ name: handle }]) !== undefined;

/**
 * The first `@` mention in `text` of one of `names` (case-insensitive), or undefined. A mention
 * starts a word (not inside an e-mail address) and ends where a word ends. Names may hold spaces:
 * at one `@` the longest name that matches wins, so `@Travel Planner` is "Travel Planner" even when
 * an assistant is called "Travel".
 */
export function firstMention<T extends { name: string }>(text: string, names: T[]): T | undefined {
  const lower = text.toLowerCase();
  const byLength = [...names].filter((n) => n.name.trim()).sort((a, b) => b.name.length - a.name.length);
  for (let at = lower.indexOf('@'); at !== -1; at = lower.indexOf('@', at + 1)) {
    if (at > 0 && /[\w@]/.test(lower[at - 1]!)) continue;
    const rest = lower.slice(at + 1);
    const hit = byLength.find((n) => rest.startsWith(n.name.toLowerCase()) && !/^[\w-]/.test(rest.slice(n.name.length)));
    if (hit) return hit;
  }
  return undefined;
}

/**
 * Who answers `trigger`, or undefined when it addresses no one. The shared assistants the sender
 * may use are read only when the message has an `@` at all: most messages do not.
 */
export async function answererOf(deps: AppDeps, group: GroupChat, trigger: GroupMessage): Promise<Answerer | undefined> {
  if (!trigger.content.includes('@')) return undefined;
  const handle = deps.config.aiHandle;
  const sender = await deps.store.read((tx) => findUser(tx, trigger.sender.id));
  if (!sender) return undefined;
  const shared = (await deps.store.read((tx) => listAssistantsFor(tx, sender.id))).filter((a) => a.ownerId === null && canUseAssistant(a, sender));
  const HANDLE = { name: handle, assistant: undefined as Assistant | undefined };
  const hit = firstMention(trigger.content, [HANDLE, ...shared.map((a) => ({ name: a.name, assistant: a }))]);
  if (!hit) return undefined;
  if (hit.assistant) return { assistant: hit.assistant, tierOf: sender.id };
  return { assistant: await groupAssistant(deps, group), tierOf: group.creatorId };
}

/**
 * The group's assistant for `@ai` as it is now: still shared, and usable by the group's creator
 * (whose choice it is). One that is not gives way to Parley's own, and the log says why; the group
 * keeps its choice, so an assistant shared again answers again.
 */
async function groupAssistant(deps: AppDeps, group: GroupChat): Promise<Assistant | undefined> {
  if (!group.assistantId) return undefined;
  const { a, creator } = await deps.store.read(function* (tx) {
    return { a: yield* findAssistantById(tx, group.assistantId!), creator: yield* findUser(tx, group.creatorId) };
  });
  if (a && creator && a.ownerId === null && canUseAssistant(a, creator)) return a;
  deps.log.warn("group follow-up: the group's assistant is no longer shared with its creator, Parley's own answers", { groupId: group.id, assistantId: group.assistantId });
  return undefined;
}

/**
 * The assistant a creator picks for `@ai`: shared (their own are theirs alone: members could not
 * see it) and one they may use, else a 400 saying which.
 */
export async function checkGroupAssistant(deps: AppDeps, assistantId: string, creator: { id: string; subscriptionTier: string; isAdmin: boolean }): Promise<Assistant> {
  const a = await deps.store.read((tx) => findAssistantById(tx, assistantId));
  if (!a || !canUseAssistant(a, creator)) throw new AppError('BAD_REQUEST', { message: `Unknown assistant "${assistantId}": assistants/list lists the ones you may use.` });
  if (a.ownerId !== null)
    throw new AppError('BAD_REQUEST', { message: `"${a.name}" is your own assistant: only an assistant an administrator shared can answer in a group.` });
  return a;
}
