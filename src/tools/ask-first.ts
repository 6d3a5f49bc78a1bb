import { ToolInterrupted, type AiEvent } from '../ai/ai.types';
import type { ToolApprovalRow } from '../db/schema';
import type { EventWriter } from '../chat/event-log';
import type { AppDeps } from '../deps';
import type { ToolDef, ToolTurn } from './tool.types';
import { decideApproval, findApprovalById, findApprovalOfCall, findToolRule, insertApproval, markAnnounced } from './approval.store';

/**
 * "Ask first" (docs/chat.md, "Tool approval"): a tool so marked runs only once the user said yes.
 * The call's approval is a row made with its `tool_call.approval_required` event in one
 * transaction; the answer (`chat/approveToolCall`) decides the row and says so on the bus, which
 * wakes the turn on whichever instance runs it. A turn resumed after a restart or taken over runs
 * the call again (same call key), finds the row, and goes on from it: waiting still, or answered
 * while no instance ran the turn. Past PARLEY_TOOL_APPROVAL_TIMEOUT_S the call counts as denied.
 */

/** The bus topic one approval's answer is told on. */
export const approvalTopic = (approvalId: string) => `tool-approval:${approvalId}`;

/** How often a waiting call reads its row anyway: a message lost on the cluster bus costs this much delay at most. */
const POLL_MS = 5_000;

/** What a turn that can ask gives its tools: its event stream, and its abort signal. */
export interface TurnStream {
  writer: EventWriter;
  signal: AbortSignal;
}

export const DENIED = (name: string) => `The user denied this call of ${name}: it did not run. Do not call it again for the same thing unless the user asks; answer without it.`;
export const DENIED_IN_CONVERSATION = (name: string) => `The user does not allow ${name} in this conversation: it did not run. Answer without it.`;
export const TIMED_OUT = (name: string, seconds: number) =>
  `Nobody answered the request to run ${name} within ${Math.round(seconds / 60) >= 1 ? `${Math.round(seconds / 60)} minutes` : `${seconds} seconds`}, so it did not run. Answer without it, and say that it needs the user's approval.`;

/** `def` wrapped so that each call waits for the user's answer before it runs. */
export function askFirst(turn: ToolTurn, stream: TurnStream, def: ToolDef): ToolDef {
  return {
    ...def,
    async run(args, emit, callId, callKey) {
      const { deps } = turn;
      const rule = await deps.store.read((tx) => findToolRule(tx, turn.conversationId, turn.user.id, def.name));
      if (rule) return rule.decision === 'approve' ? def.run(args, emit, callId, callKey) : DENIED_IN_CONVERSATION(def.name);
      let row = await openApproval(turn, stream, def, args, callId, callKey);
      if (row.status === 'pending') row = await waitForAnswer(deps, row, stream.signal);
      if (!row.announced) await announce(deps, stream.writer, row);
      if (row.status === 'approved') return def.run(args, emit, callId, callKey);
      return row.decidedBy === 'timeout' ? TIMED_OUT(def.name, deps.config.toolApprovalTimeoutS) : DENIED(def.name);
    },
  };
}

/** The call's approval: found (the call ran before a restart), or made now with its event. */
async function openApproval(turn: ToolTurn, stream: TurnStream, def: ToolDef, args: Record<string, unknown>, callId: string, callKey: string): Promise<ToolApprovalRow> {
  const { deps } = turn;
  const now = deps.now();
  // Events emitted before are written first: this one must follow them.
  await stream.writer.idle();
  return deps.store.write(function* (tx) {
    const found = yield* findApprovalOfCall(tx, turn.responseId, callKey);
    if (found) return found;
    const row = yield* insertApproval(
      tx,
      { responseId: turn.responseId, itemId: callId, callKey, toolName: def.name, source: def.source, arguments: args, expiresAt: now + deps.config.toolApprovalTimeoutS * 1000 },
      now,
    );
    const event: AiEvent = { type: 'tool_call.approval_required', itemId: callId, name: def.name, label: def.label, arguments: args };
    stream.writer.add(event);
    yield* stream.writer.writeIn(tx);
    return row;
  });
}

/** Tell the stream how the call was answered, once (the row remembers, in the same transaction). */
async function announce(deps: AppDeps, writer: EventWriter, row: ToolApprovalRow): Promise<void> {
  await writer.idle();
  await deps.store.write(function* (tx) {
    const event: AiEvent = { type: 'tool_call.approval_resolved', itemId: row.itemId, decision: row.status === 'approved' ? 'approved' : 'denied', decidedBy: row.decidedBy ?? 'user' };
    writer.add(event);
    yield* writer.writeIn(tx);
    yield* markAnnounced(tx, row.id);
  });
}

/**
 * Until the row is answered (the bus, or a read every POLL_MS), or its time is up (then denied
 * here, unless an answer came first). The turn ending meanwhile (cancel, shutdown) interrupts it:
 * the row stays as it is, for the turn that resumes or for `finish` to close.
 */
function waitForAnswer(deps: AppDeps, row: ToolApprovalRow, signal: AbortSignal): Promise<ToolApprovalRow> {
  return new Promise<ToolApprovalRow>((resolve, reject) => {
    let settled = false;
    const cleanup = () => {
      settled = true;
      unsubscribe();
      clearInterval(poll);
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const settle = (answered: ToolApprovalRow | undefined) => {
      if (settled || !answered || answered.status === 'pending') return;
      cleanup();
      resolve(answered);
    };
    const fail = (err: unknown) => {
      if (settled) return;
      cleanup();
      reject(err);
    };
    const check = () => deps.store.read((tx) => findApprovalById(tx, row.id)).then(settle, fail);
    const expire = () =>
      deps.store
        .write((tx) => decideApproval(tx, row.id, 'denied', 'timeout', deps.now()))
        .then((decided) => (decided ? settle(decided) : check()), fail);
    const onAbort = () => fail(new ToolInterrupted(String(signal.reason ?? 'aborted')));
    const unsubscribe = deps.bus.subscribe(approvalTopic(row.id), () => void check());
    const poll = setInterval(() => void check(), POLL_MS);
    const timer = setTimeout(() => void expire(), Math.max(0, row.expiresAt - deps.now()));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    // Answered between the read that found it pending and the subscription.
    void check();
  });
}
