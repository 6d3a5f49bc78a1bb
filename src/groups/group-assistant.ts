import type { Assistant, GroupChat } from '../db/schema';
import type { AppDeps } from '../deps';
import { afterCommit, type Tx, type Work } from '../db/work';
import { claimExpiredLease, listExpiredLeases, releaseLease, renewLeases, tryAcquireLease } from '../tasks/lease.store';
import { lockGroup } from './group.store';
import { listGroupItems, recordAnswerAuthor } from './group-message.store';
import { answererOf, type Answerer } from './group-answerer';
import { turnAssistantOf } from '../assistants/assistant-resources';
import { appendItem } from '../chat/conversation.store';
import { endAnswer, publishProgress, publishRecorded, recordGroupEvent, seedProgressCounter } from './group-events';
import { assistantSender, groupMessageOf, type GroupMessage, type WebSearchPart } from './group.view';
import { AiError, AnswerCutError, type AiEvent, type AiMessage } from '../ai/ai.types';
import { searchFailureOf } from '../ai/web-search-tool';
import { findUser } from '../account/account.store';
import { meterCalls, type CallMeter } from '../usage/meter-calls';
import type { UsageCaller } from '../usage/usage.types';
import type { ChatTarget } from '../connections/resolver';

/** Fire-and-forget: the sender's response never waits for the assistant. */
export function startFollowUpIfAddressed(deps: AppDeps, group: GroupChat, trigger: GroupMessage, requestId?: string, payer?: UsageCaller): void {
  // Most messages mention no one: only those with an `@` go on to read who is addressed.
  if (!group.intelligentResponses || !trigger.content.includes('@')) return;
  void (async () => {
    const answerer = await answererOf(deps, group, trigger);
    if (answerer) await runFollowUp(deps, group, trigger, requestId, payer, answerer);
  })().catch((err) => {
    deps.log.error('group follow-up crashed', { requestId, groupId: group.id, cause: String(err) });
    // No outcome will be published to end it: its deltas must not stay kept for resume.
    endAnswer(deps, group.id, trigger.id);
  });
}

const NO_PROVIDER = 'No AI provider is configured on this server.';
const PROVIDER_FAILED = 'The AI provider failed to answer. Try again later.';
/** A provider that neither answers nor fails must not keep a follow-up (and its memory) forever. */
const ANSWER_TIMEOUT_MS = 5 * 60_000;
const TOO_SLOW = 'The AI provider did not finish its answer within five minutes.';

/**
 * Answer `trigger` in the group. Progress (`assistant.*`) goes out live only; the outcome — the
 * assistant's `message.created` or `assistant.failed` — is stored and numbered like every
 * durable event, so a client that reconnects learns how the follow-up ended.
 */
export async function runFollowUp(
  deps: AppDeps,
  group: GroupChat,
  trigger: GroupMessage,
  requestId?: string,
  payer?: UsageCaller,
  answerer: Answerer = { tierOf: group.creatorId },
): Promise<void> {
  const replyTo = trigger.id;
  const { assistant } = answerer;
  const where = { requestId, groupId: group.id, replyTo, ...(assistant ? { assistantId: assistant.id } : {}) };
  await seedProgressCounter(deps, group.id);
  publishProgress(deps, group.id, { type: 'assistant.started', replyTo, ...(assistant ? { assistantId: assistant.id, name: assistant.name } : {}) });
  const target = (assistant?.model && (await assistantTarget(deps, assistant.model, answerer.tierOf, where))) || (await groupTarget(deps, group, where));
  if (target instanceof Error) return fail(deps, group, replyTo, 'provider_error', target.message);
  if (!target) return fail(deps, group, replyTo, 'no_provider', NO_PROVIDER);
  const messages = await contextOf(deps, group, assistant);
  // The member who addressed the assistant pays (docs/usage.md): over their quota, no answer.
  let meter: CallMeter;
  try {
    const caller = { ...(payer ?? { userId: trigger.sender.id }), ...(assistant ? { assistantId: assistant.id } : {}) };
    meter = await meterCalls(deps, { caller, kind: 'group', target, messages });
  } catch (err) {
    // The event's reasons are the interface's two: the sentence says it is the quota.
    if (err instanceof AiError) return fail(deps, group, replyTo, 'provider_error', err.message);
    throw err;
  }
  // This instance answers: if it dies, another one says so (`endInterruptedAnswers`).
  await deps.store.write((tx) => tryAcquireLease(tx, answerLease(group.id, replyTo), deps.instanceId, ANSWER_LEASE_MS, deps.now()));

  let text = '';
  const parts: WebSearchPart[] = [];
  // The provider's completed event does not repeat the search's item id; searches run one at a time.
  let searchId = '';
  // A failed search's note (web-search-tool.ts) comes just before its empty `web_search.completed`.
  let searchError: string | undefined;
  let cutOff: string | undefined;
  const deadline = AbortSignal.timeout(ANSWER_TIMEOUT_MS);
  try {
    const warn = (msg: string, fields: Record<string, unknown>) => deps.log.warn(msg, { ...where, ...fields });
    const asker = await deps.store.read((tx) => findUser(tx, trigger.sender.id));
    const turns = target.provider.streamChat({
      model: target.model,
      messages,
      // OpenAI's hosted search (openai-responses); the other providers search through the
      // registry's `web_search` function, the one group tool today (src/tools/).
      webSearch: true,
      tools: await deps.tools.forTurn({
        deps,
        kind: 'group',
        user: { id: trigger.sender.id, subscriptionTier: asker?.subscriptionTier ?? '', enableMemories: false },
        conversationId: group.conversationId,
        responseId: replyTo,
        provider: target.provider.name,
        // Its tools narrow what the registry allows in groups (web search alone today).
        ...(assistant ? { assistant: await turnAssistantOf(deps, assistant) } : {}),
        warn,
      }),
      signal: deadline,
      warn,
      onUsage: meter.onUsage,
    });
    for await (const ev of turns) {
      if (ev.type === 'text.delta') {
        text += ev.delta;
        publishProgress(deps, group.id, { type: 'assistant.text.delta', replyTo, delta: ev.delta });
      } else if (ev.type === 'web_search.in_progress') {
        searchId = ev.itemId;
        const part = webSearchPart(ev);
        parts.push(part);
        publishProgress(deps, group.id, { type: 'assistant.web_search.in_progress', replyTo, itemId: ev.itemId, part });
      } else if (ev.type === 'web_search.completed') {
        publishProgress(deps, group.id, {
          type: 'assistant.web_search.completed',
          replyTo,
          itemId: searchId,
          results: ev.results,
          ...(searchError ? { error: searchError } : {}),
        });
        searchError = undefined;
      } else if (ev.type === 'reasoning_text.delta') {
        searchError = searchFailureOf(ev.delta) ?? searchError;
      } else if (ev.type === 'error') {
        throw new Error(ev.message);
      }
      // Reasoning, images and tool progress are not part of a group answer.
    }
  } catch (err) {
    deps.log.warn('group follow-up: provider failed', {
      ...where,
      cause: err instanceof Error ? err.message : String(err),
      ...(err instanceof AiError && err.detail ? { upstream: err.detail } : {}),
    });
    // A cut answer keeps its text (docs/realtime.md); other failures say why, in the provider
    // layer's short words (never the upstream's own text).
    if (err instanceof AnswerCutError && text.trim()) cutOff = err.message;
    else if (deadline.aborted) return fail(deps, group, replyTo, 'provider_error', TOO_SLOW);
    else return fail(deps, group, replyTo, 'provider_error', err instanceof AiError ? err.message : PROVIDER_FAILED);
  } finally {
    void meter.close();
  }
  if (!text.trim() && parts.length === 0) return fail(deps, group, replyTo, 'provider_error', PROVIDER_FAILED);

  await deps.store.write(function* (tx) {
    // The group may have been deleted while the assistant was writing: then there is no one to tell.
    if (!(yield* lockGroup(tx, group.id))) return;
    const now = deps.now();
    const item = yield* appendItem(tx, { conversationId: group.conversationId, role: 'assistant', content: text, parts }, now);
    const author = assistant ? { assistantId: assistant.id, name: assistant.name } : undefined;
    if (author) yield* recordAnswerAuthor(tx, item.id, author);
    const message = groupMessageOf(item, assistantSender(author?.name ?? deps.config.aiHandle), author);
    const event = yield* recordGroupEvent(tx, group.id, { type: 'message.created', message, replyTo, ...(cutOff ? { cutOff } : {}) }, now);
    yield* releaseLease(tx, answerLease(group.id, replyTo), deps.instanceId);
    yield* afterCommit(() => publishRecorded(deps, group.id, event));
  });
}

/**
 * The group's own model, or the group default (docs/groups.md, "The assistant's model"). A chosen
 * model that has gone since (its connection removed, the model hidden) gives way to the default;
 * a default that is gone is a failure to say (docs/connections.md, "Defaults").
 */
async function groupTarget(deps: AppDeps, group: GroupChat, where: Record<string, unknown>): Promise<ChatTarget | undefined | Error> {
  if (group.model) {
    // The creator's choice, within the creator's tier (whoever asks): a creator whose tier no longer has it gets the default.
    const creator = await deps.store.read((tx) => findUser(tx, group.creatorId));
    const chosen = await deps.connections.chat(group.model, 'group', { subscriptionTier: creator?.subscriptionTier ?? '' }).catch((err: Error) => err);
    if (!(chosen instanceof Error)) return chosen;
    deps.log.warn('group follow-up: the group\'s model is gone, the group default answers', { ...where, model: group.model, cause: chosen.message });
  }
  return deps.connections.chat(undefined, 'group').catch((err: Error) => err);
}

/**
 * An assistant's own model, in the tier of whoever's choice it is (the creator for `@ai`, the
 * member who mentioned it): one no longer offered there gives way to the group's model, and the
 * log says why.
 */
async function assistantTarget(deps: AppDeps, model: string, tierOf: string, where: Record<string, unknown>): Promise<ChatTarget | undefined> {
  const user = await deps.store.read((tx) => findUser(tx, tierOf));
  const chosen = await deps.connections.chat(model, 'group', { subscriptionTier: user?.subscriptionTier ?? '' }).catch((err: Error) => err);
  if (!(chosen instanceof Error)) return chosen;
  deps.log.warn("group follow-up: the assistant's model is not available, the group's model answers", { ...where, model, cause: chosen.message });
  return undefined;
}

async function fail(deps: AppDeps, group: GroupChat, replyTo: string, reason: FailReason, message: string): Promise<void> {
  await deps.store.write((tx) => recordFailure(tx, deps, group.id, replyTo, reason, message));
}

type FailReason = 'no_provider' | 'provider_error' | 'interrupted';

function* recordFailure(tx: Tx, deps: AppDeps, groupId: string, replyTo: string, reason: FailReason, message: string): Work<void> {
  yield* releaseLease(tx, answerLease(groupId, replyTo), deps.instanceId);
  if (!(yield* lockGroup(tx, groupId))) return;
  const event = yield* recordGroupEvent(tx, groupId, { type: 'assistant.failed', replyTo, reason, message }, deps.now());
  yield* afterCommit(() => publishRecorded(deps, groupId, event));
}

/*
 * An answer being written is held by its instance through a lease (src/tasks/lease.store.ts),
 * `group-answer:<group>:<message>`, renewed every ANSWER_RENEW_MS. When that instance dies (or a
 * server on SQLite is killed and started again), the lease expires and any instance ends the
 * answer with `assistant.failed` (reason `interrupted`), so the members are not left waiting for
 * an answer that will never come. A new answer can be asked for by addressing the assistant again.
 */
const ANSWER_PREFIX = 'group-answer:';
export const ANSWER_LEASE_MS = 15_000;
export const ANSWER_RENEW_MS = 5_000;
const INTERRUPTED = 'The server writing the answer stopped before it was finished. Ask again.';
const answerLease = (groupId: string, replyTo: string) => `${ANSWER_PREFIX}${groupId}:${replyTo}`;

/** Renew the answers this instance is writing, and end those whose instance stopped renewing theirs. */
export async function keepGroupAnswers(deps: AppDeps): Promise<number> {
  await deps.store.write((tx) => renewLeases(tx, deps.instanceId, ANSWER_PREFIX, ANSWER_LEASE_MS, deps.now()));
  const expired = await deps.store.read((tx) => listExpiredLeases(tx, ANSWER_PREFIX, deps.now()));
  let ended = 0;
  for (const lease of expired) {
    const [groupId, replyTo] = lease.name.slice(ANSWER_PREFIX.length).split(':');
    if (!groupId || !replyTo) continue;
    const claimed = await deps.store.write(function* (tx) {
      // One instance claims it (the others find it held), then ends it and lets it go.
      if (!(yield* claimExpiredLease(tx, lease.name, deps.instanceId, ANSWER_LEASE_MS, deps.now()))) return false;
      yield* recordFailure(tx, deps, groupId, replyTo, 'interrupted', INTERRUPTED);
      return true;
    });
    if (claimed) ended++;
  }
  return ended;
}

/** Run `keepGroupAnswers` every ANSWER_RENEW_MS; returns the stopper. */
export function startAnswerKeeper(deps: AppDeps, everyMs = ANSWER_RENEW_MS): () => void {
  let busy = false;
  const timer = setInterval(async () => {
    if (busy || deps.lifecycle.stopping) return;
    busy = true;
    try {
      const ended = await keepGroupAnswers(deps);
      if (ended) deps.log.info('ended interrupted group answers', { ended });
    } catch (err) {
      deps.log.warn('group answer leases could not be renewed or claimed', { cause: err instanceof Error ? err.message : String(err) });
    } finally {
      busy = false;
    }
  }, everyMs);
  return () => clearInterval(timer);
}

const webSearchPart = (ev: Extract<AiEvent, { type: 'web_search.in_progress' }>): WebSearchPart => ({
  type: 'web_search_tool_call',
  // The providers report no safe-search setting: null says "not reported" rather than guessing.
  content: { query: ev.query ?? null, num_results: ev.numResults ?? null, country: ev.country ?? null, safe_search: null },
});

/**
 * The system prompt, then the recent history, oldest first; members' names prefix their lines so
 * the model knows who said what. A shared assistant answers under its name, its instructions after
 * Parley's own (as in a chat, docs/assistants.md).
 */
async function contextOf(deps: AppDeps, group: GroupChat, assistant?: Assistant): Promise<AiMessage[]> {
  const name = assistant ? assistant.name : deps.config.aiHandle;
  const base =
    `You are @${name}, an assistant taking part in the group chat "${group.name}". Each member's message starts with their name. ` +
    `Answer the latest message that addresses you, briefly and in the language it was written in.`;
  const instructions = assistant?.instructions.trim();
  const system: AiMessage = { role: 'system', content: instructions ? `${base}\n\nYour instructions:\n${instructions}` : base };
  const { items } = await deps.store.read((tx) => listGroupItems(tx, group.conversationId, { limit: deps.config.groupAiHistory }));
  // Its own earlier answers are the model's turns; another assistant's are lines of the
  // conversation under that one's name, so it does not take them for what it said itself.
  const own = (i: (typeof items)[number]) => (i.assistantId ?? undefined) === assistant?.id;
  return [
    system,
    ...items.map((i): AiMessage =>
      i.role === 'assistant'
        ? own(i)
          ? { role: 'assistant', content: i.content }
          : { role: 'user', content: `@${i.assistantName ?? deps.config.aiHandle} (an assistant): ${i.content}` }
        : { role: 'user', content: `${i.senderName || 'Someone'}: ${i.content}` },
    ),
  ];
}
