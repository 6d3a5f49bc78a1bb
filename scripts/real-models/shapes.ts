/**
 * Every kind of request Parley makes of a model, driven through a running `parley` as a client
 * would: each shape passes when its stream answers 200 and streams an answer (text deltas, then
 * `done`, no `error`); otherwise its `detail` says what happened instead.
 */
import { readEvents, type Parley } from './parley-binary';
import { TOOL_MARKER } from './tool-call-proxy';
import { CUT_OFF } from '../../src/ai/openai-chat';

export interface ShapeResult {
  ok: boolean;
  detail: string;
}

export const SHAPES = ['first turn', 'long chat', 'image', 'research', 'group', 'history tool'] as const;
export type ShapeName = (typeof SHAPES)[number];

/** The longest a shape may take: generous for a loaded 2-core machine, short enough to end a hung run. */
const SHAPE_TIMEOUT_MS = 120_000;
/** Turns of the long chat: each adds the tiny model's answer to the history the next one sends. */
const LONG_CHAT_TURNS = 6;
/** A 1×1 PNG. */
const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/**
 * The refusal Parley learns the tool role from (capabilities.ts): a template with no `tool` role
 * and strict alternation (Gemma 2) refuses the first request carrying a tool's result, once per
 * process; the same round then goes again with the result as a user turn.
 */
export const TOOL_ROLE_REFUSED = /^HTTP 400: .*Conversation roles must alternate/;

/**
 * `expected`: refusals the caller provokes on purpose (a server that refuses tools, which Parley
 * must learn from) and that do not fail the shape.
 */
export async function runShape(p: Parley, shape: ShapeName, expected?: RegExp): Promise<ShapeResult> {
  const refusedBefore = p.upstreamRefusals?.().length ?? 0;
  const result = await runShapeOnce(p, shape);
  // A refusal Parley recovered from (a research plan falls back to the question) still fails the shape.
  const refused = (p.upstreamRefusals?.().slice(refusedBefore) ?? []).filter((r) => !expected?.test(r));
  if (result.ok && refused.length) return { ok: false, detail: `answered, but the model server refused a request on the way: ${refused[0]}` };
  return result;
}

async function runShapeOnce(p: Parley, shape: ShapeName): Promise<ShapeResult> {
  const signal = AbortSignal.timeout(SHAPE_TIMEOUT_MS);
  try {
    switch (shape) {
      case 'first turn':
        return (await turn(p, 'chat/stream', { message: 'Tell me a story about a cat.' }, signal)).result;
      case 'long chat':
        return await longChat(p, signal);
      case 'image':
        return (await turn(p, 'chat/stream', { message: 'What is in this picture?', images: [{ imageUrl: PIXEL, detail: 'low' }] }, signal)).result;
      case 'research':
        return await research(p, signal);
      case 'group':
        return await groupFollowUp(p, signal);
      case 'history tool':
        return await historyTool(p, signal);
    }
  } catch (err) {
    return { ok: false, detail: signal.aborted ? `no end within ${SHAPE_TIMEOUT_MS / 1000} s` : String(err instanceof Error ? err.message : err) };
  }
}

export interface Turn {
  result: ShapeResult;
  events: any[];
  conversationId?: string;
}

/** One chat or research turn, read to its end. */
export async function turn(p: Parley, path: string, body: unknown, signal: AbortSignal): Promise<Turn> {
  const res = await p.call(path, body, undefined, signal);
  if (res.status !== 200) return { result: { ok: false, detail: `HTTP ${res.status}: ${await res.text()}` }, events: [] };
  const events: any[] = [];
  for await (const e of readEvents(res, signal)) {
    events.push(e);
    if (e.type === 'done' || e.type === 'error') break;
  }
  const conversationId = events.find((e) => e.type === 'conversation.created')?.conversationId;
  return { result: judge(events), events, conversationId };
}

/**
 * Text deltas, then `done`, and no `error`; or text deltas cut at the length limit (the rig bounds
 * answers at 64 tokens, PARLEY_AI_ANSWER_TOKENS, and since issue 18 item 6 a cut answer ends with an
 * `error` that says so instead of `done`): that is a streamed answer too.
 */
function judge(events: any[]): ShapeResult {
  const error = events.find((e) => e.type === 'error');
  const cut = error !== undefined && error.message === CUT_OFF && events.at(-1) === error;
  if (error && !cut) return { ok: false, detail: error.message };
  const last = events.at(-1)?.type;
  if (!cut && last !== 'done') return { ok: false, detail: `the stream ended without done (last: ${last ?? 'nothing'})` };
  const text = events.filter((e) => e.type === 'text.delta').map((e) => e.delta).join('');
  if (!text.trim()) return { ok: false, detail: 'done without any answer text' };
  return { ok: true, detail: `${text.length} characters${cut ? ', cut at the length limit' : ''}` };
}

async function longChat(p: Parley, signal: AbortSignal): Promise<ShapeResult> {
  let conversationId: string | undefined;
  let answered = 0;
  for (let i = 1; i <= LONG_CHAT_TURNS; i++) {
    const t = await turn(p, 'chat/stream', { message: `Turn ${i}: and then what happened to the cat?`, ...(conversationId ? { conversationId } : {}) }, signal);
    if (!t.result.ok) return { ok: false, detail: `turn ${i} of ${LONG_CHAT_TURNS}: ${t.result.detail}` };
    conversationId ??= t.conversationId;
    answered += t.events.filter((e) => e.type === 'text.delta').length;
  }
  return { ok: true, detail: `${LONG_CHAT_TURNS} turns, ${answered} deltas` };
}

async function research(p: Parley, signal: AbortSignal): Promise<ShapeResult> {
  const t = await turn(p, 'chat/streamDeepResearch', { message: 'How do cats purr?' }, signal);
  if (!t.result.ok) return t.result;
  // Planning happened (or fell back) and a search ran whose pages were read for the report.
  const found = t.events.filter((e) => e.type === 'web_search.completed').flatMap((e) => e.results);
  if (!found.length) return { ok: false, detail: 'the report came without any web search results' };
  return { ok: true, detail: `${found.length} results, ${t.result.detail}` };
}

/**
 * A group whose members speak in a row, then one addresses the assistant (docs/groups.md): the
 * follow-up is read from the group's stream until the assistant's message or its failure.
 */
async function groupFollowUp(p: Parley, signal: AbortSignal): Promise<ShapeResult> {
  const [ann, bob, cy] = p.keys as [string, string, string];
  const group = await p.json('groupChat/createGroupChat', { name: 'Picnic' }, ann);
  const { code } = await p.json('groupChat/createInvite', { groupChatId: group.id }, ann);
  for (const key of [bob, cy]) await p.json('groupChat/joinGroup', { code }, key);
  const stream = await p.call('groupChat/subscribeToGroup', { groupChatId: group.id }, ann, signal);
  if (stream.status !== 200) return { ok: false, detail: `subscribe: HTTP ${stream.status}` };
  const events = readEvents(stream, signal);
  for (const [key, message] of [
    [ann, 'Shall we have a picnic on Saturday?'],
    [bob, 'Yes! By the lake.'],
    [cy, 'I will bring apples.'],
    [bob, '@ai what else should we bring?'],
  ] as const)
    await p.json('groupChat/sendGroupMessage', { groupChatId: group.id, message }, key);
  let deltas = 0;
  for await (const e of events) {
    if (e.type === 'assistant.text.delta') deltas++;
    else if (e.type === 'assistant.failed') return { ok: false, detail: `assistant.failed: ${p.lastLogCause() ?? e.message}` };
    else if (e.type === 'message.created' && e.message.role === 'assistant') {
      if (!deltas || !e.message.content.trim()) return { ok: false, detail: 'the assistant answered without streaming text' };
      return { ok: true, detail: `${deltas} deltas` };
    }
  }
  return { ok: false, detail: 'the group stream ended before the assistant answered' };
}

/**
 * A history-tool round: the proxy in front of llama-server scripts the model's call of
 * `search_history`; Parley runs it over an earlier conversation and sends the call and its
 * result back through the real template for the answer.
 */
async function historyTool(p: Parley, signal: AbortSignal): Promise<ShapeResult> {
  const before = await turn(p, 'chat/stream', { message: 'Remember: our picnic is by the lake.' }, signal);
  if (!before.result.ok) return { ok: false, detail: `the earlier conversation: ${before.result.detail}` };
  const t = await turn(p, 'chat/stream', { message: `Where is our picnic? ${TOOL_MARKER}` }, signal);
  const found = t.events.find((e) => e.type === 'history.completed');
  if (!found) return t.result.ok ? { ok: false, detail: 'no history.completed: the tool round did not happen' } : t.result;
  if (!t.result.ok) return { ok: false, detail: `after the tool round: ${t.result.detail}` };
  return { ok: true, detail: `${found.results.length} history hits, ${t.result.detail}` };
}
