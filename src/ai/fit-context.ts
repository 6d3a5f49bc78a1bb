import { AiError } from './ai.types';
import { IMAGE_TOKENS } from './count-tokens';
import type { ModelContext } from './model-context';
import type { ChatTurn } from './shape-chat-messages';

/**
 * The context budget: a request that fits the model's context window with room for the answer,
 * so a conversation of any length keeps working (docs/ai-providers.md, "Context budget").
 *
 * What is kept, in this order, until the room is used:
 * 1. the system message(s) and the newest user turn with its tool rounds so far: always (a
 *    tool's output is shortened before either would be dropped), a system text with a `share`
 *    (the user's memories) cut to that share of the room first;
 * 2. the tool definitions, when they fit beside those;
 * 3. the history, newest first, in whole turns, starting at a user turn.
 * Older turns are simply left out (every chat product drops the oldest first; summarising them
 * would cost a model call per turn on a board that runs one answer at a time).
 */

/** Renders turns and tools as they will be sent (the request shaper), for counting. */
export type RenderRequest<T> = (turns: ChatTurn[], tools: T[]) => { messages: unknown[]; tools: unknown[] };

export interface Fitted<T> {
  turns: ChatTurn[];
  tools: T[];
  /** The answer's limit (`max_tokens`): PARLEY_AI_ANSWER_TOKENS, else what the context has left after the prompt; undefined when no budget is known. */
  maxTokens?: number;
  /** How many older turns were left out, whether the tools were, and how many tool outputs were shortened. */
  leftOut: { turns: number; tools: boolean; shortened: number };
}

/** Template tokens around one message, at most, for choosing what to keep (the exact count then checks). */
const PER_TURN = 8;
/** Rounds of choose → count exactly → choose again with the difference. */
const ATTEMPTS = 6;
export const SHORTENED = '\n[… shortened to fit the model’s context]';

/**
 * After a refusal for the context's size, what to keep free besides (fitContext's `shrinkBy`):
 * what the server said was over (llama-server's `n_prompt_tokens` beyond `n_ctx`) and a tenth of
 * the window more, or a quarter of the window when it did not say. Undefined: not such a refusal.
 */
export function overrunOf(err: unknown, contextTokens: number | undefined): number | undefined {
  const e = err as { status?: number; message?: string; error?: { type?: string; n_prompt_tokens?: unknown; n_ctx?: unknown } };
  if (!contextTokens || e?.status !== 400 || !/exceed|context (length|size|window)|maximum context|too long/i.test(`${e.message ?? ''} ${e.error?.type ?? ''}`)) return undefined;
  const over = typeof e.error?.n_prompt_tokens === 'number' && typeof e.error?.n_ctx === 'number' ? e.error.n_prompt_tokens - e.error.n_ctx : undefined;
  return over !== undefined && over > 0 ? over + Math.ceil(contextTokens / 10) : Math.ceil(contextTokens / 4);
}

/** The room kept for the answer: PARLEY_AI_ANSWER_TOKENS (at most half the context), or a quarter of the context up to 4,096 tokens. */
export function answerRoom(contextTokens: number, setting: number): number {
  return setting > 0 ? Math.min(setting, Math.floor(contextTokens / 2)) : Math.min(4096, Math.floor(contextTokens / 4));
}

/** What a prompt may take of a window of `contextTokens`: the rest is the answer's. */
export const promptRoom = (contextTokens: number, answerSetting: number): number => contextTokens - answerRoom(contextTokens, answerSetting);

export function tooLongMessage(tokens: number, room: number): string {
  return `The message is too long for the AI model: it takes about ${tokens} tokens, and the model has room for ${room} beside its answer. Shorten it, or use a model with a larger context.`;
}

/**
 * `shrinkBy`: tokens to keep free beyond the count, after the server refused a request the count
 * said would fit (an image costing more than IMAGE_TOKENS, an estimate under the true count).
 */
export async function fitContext<T>(
  turns: ChatTurn[],
  tools: T[],
  context: ModelContext,
  answerSetting: number,
  render: RenderRequest<T>,
  shrinkBy = 0,
): Promise<Fitted<T>> {
  const nothingLeftOut = { turns: 0, tools: false, shortened: 0 };
  const size = context.contextTokens;
  if (!size) return { turns, tools, leftOut: nothingLeftOut };
  const room = promptRoom(size, answerSetting) - shrinkBy;
  // Set, the answer's room is also its limit. Unset, the answer may use all the prompt leaves —
  // said only when the count is exact: an estimate may run under the true count (digits, some
  // scripts), and a limit of "window minus estimate" would then overrun the window (vLLM refuses
  // that; a server Parley does not know may refuse any limit above its model's output cap).
  const limit = (prompt: number) => (answerSetting > 0 ? answerRoom(size, answerSetting) : context.counter.exact ? size - prompt - shrinkBy : undefined);
  const count = (t: ChatTurn[], k: T[]) => {
    const r = render(t, k);
    return context.counter.countRequest(r.messages, r.tools);
  };
  // Most conversations fit, and go as they are: known from a bound without asking the server
  // (not after a refusal: the bound was wrong then), else from one count of the whole.
  const request = render(turns, tools);
  const bound = shrinkBy ? undefined : context.counter.boundRequest?.(request.messages, request.tools);
  if (bound !== undefined && bound <= room) {
    expectNext(turns, tools, context, render);
    return { turns, tools, maxTokens: limit(bound), leftOut: nothingLeftOut };
  }
  const whole = await context.counter.countRequest(request.messages, request.tools);
  if (whole <= room) {
    // Asked again by a later request of the same shape (a new conversation's first turn).
    context.counter.expectRequest?.(request.messages, request.tools);
    expectNext(turns, tools, context, render);
    return { turns, tools, maxTokens: limit(whole), leftOut: nothingLeftOut };
  }

  const newest = turns.findLastIndex((t) => t.role === 'user');
  const system = await boundShares(turns.filter((t) => t.role === 'system'), room, context);
  const history = turns.slice(0, Math.max(newest, 0)).filter((t) => t.role !== 'system');
  let current = newest < 0 ? turns.filter((t) => t.role !== 'system') : turns.slice(newest);
  // Counted newest first and only as far as the room reaches: a long history is never counted whole.
  const costs: number[] = [];
  const costOf = async (i: number) => (costs[i] ??= await turnCost(history[i]!, context));
  let shortened = 0;
  // Estimated history costs times this: raised when the exact count shows the template costs
  // more, and remembered for the next turns of this model.
  let scale = context.historyScale ?? 1;
  let measured: { fixed: number; toolsCost: number } | undefined;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const fixed = measured?.fixed ?? (await count([...system, ...current], []));
    if (fixed > room) {
      // The newest turn alone is too long: its tools' outputs give way, the user's words cannot.
      const cut = await shortenToolOutputs(current, fixed - room, context);
      if (!cut) throw new AiError(tooLongMessage(fixed, room));
      current = cut.turns;
      shortened += cut.shortened;
      measured = undefined;
      continue;
    }
    const toolsCost = measured?.toolsCost ?? (tools.length ? (await count([...system, ...current], tools)) - fixed : 0);
    measured = { fixed, toolsCost };
    const keepTools = tools.length > 0 && fixed + toolsCost <= room;
    let free = room - fixed - (keepTools ? toolsCost : 0);
    let from = history.length;
    while (from > 0 && (await costOf(from - 1)) * scale <= free) free -= costs[--from]! * scale;
    // Whole exchanges: the kept history starts with a user turn.
    while (from < history.length && history[from]!.role !== 'user') from++;
    const kept = [...system, ...history.slice(from), ...current];
    const keptTools = keepTools ? tools : [];
    const n = await count(kept, keptTools);
    if (n <= room) {
      const leftOut = { turns: from, tools: tools.length > 0 && !keepTools, shortened };
      return { turns: kept, tools: keptTools, maxTokens: limit(n), leftOut };
    }
    // The per-turn estimates fell short of the exact count: choose again, scaled by how much.
    const estimated = costs.slice(from).reduce((a, b) => a + b, 0);
    const actual = n - fixed - (keepTools ? toolsCost : 0);
    scale = Math.max(scale * 1.1, (actual / Math.max(estimated, 1)) * 1.05);
    // The next turn starts from what this template was seen to cost, not from the worst ever seen.
    context.historyScale = (actual / Math.max(estimated, 1)) * 1.05;
  }
  throw new AiError(tooLongMessage(await count([...system, ...current], []), room));
}

/**
 * After a user turn that went whole, the conversation's next turn is likely the same plus the
 * answer and a new user message: its shape is learned meanwhile, so that turn need not count.
 */
function expectNext<T>(turns: ChatTurn[], tools: T[], context: ModelContext, render: RenderRequest<T>): void {
  if (!context.counter.expectRequest || turns.at(-1)?.role !== 'user') return;
  const next = render([...turns, { role: 'assistant', content: NEXT_TEXT }, { role: 'user', content: NEXT_TEXT }], tools);
  context.counter.expectRequest(next.messages, next.tools);
}

/** Any text stands for the next turn's: only its shape is learned. */
const NEXT_TEXT = 'next';

/**
 * System texts with a `share` (AiMessage) cut to that share of the room, by whole lines from the
 * end, counted one line at a time and only as far as the share reaches; a text left with its
 * heading alone is left out.
 */
async function boundShares(system: ChatTurn[], room: number, context: ModelContext): Promise<ChatTurn[]> {
  const out: ChatTurn[] = [];
  for (const t of system) {
    if (!('share' in t) || !t.share) {
      out.push(t);
      continue;
    }
    const limit = Math.floor(room * t.share);
    const lines = t.content.split('\n');
    let used = 0;
    let keep = 0;
    for (; keep < lines.length; keep++) {
      const cost = (await context.counter.countText(lines[keep]!)) + 1;
      if (used + cost > limit) break;
      used += cost;
    }
    if (keep === lines.length) out.push(t);
    else if (keep > 1) out.push({ ...t, content: lines.slice(0, keep).join('\n') });
  }
  return out;
}

async function turnCost(t: ChatTurn, context: ModelContext): Promise<number> {
  const images = 'images' in t ? (t.images?.length ?? 0) : 0;
  return PER_TURN + images * IMAGE_TOKENS + (await context.counter.countText(t.content));
}

/**
 * The newest turn's tool outputs, the longest first, cut by `excess` tokens (and a little more:
 * the cut is proportional to characters, which tokens follow only roughly). Undefined when there
 * is nothing left to cut.
 */
async function shortenToolOutputs(turns: ChatTurn[], excess: number, context: ModelContext): Promise<{ turns: ChatTurn[]; shortened: number } | undefined> {
  const out = [...turns];
  let left = excess;
  let shortened = 0;
  const order = out
    .map((t, i) => ({ t, i }))
    .filter(({ t }) => t.role === 'tool' && t.content.length > SHORTENED.length)
    .sort((a, b) => b.t.content.length - a.t.content.length);
  for (const { t, i } of order) {
    if (left <= 0) break;
    const tokens = await context.counter.countText(t.content);
    const keepTokens = Math.max(0, tokens - left - PER_TURN * 4);
    const keepChars = Math.floor((t.content.length * keepTokens) / Math.max(tokens, 1));
    const text = t.content.endsWith(SHORTENED) ? t.content.slice(0, -SHORTENED.length) : t.content;
    out[i] = { ...t, content: text.slice(0, keepChars) + SHORTENED } as ChatTurn;
    left -= tokens - keepTokens;
    shortened++;
  }
  return shortened ? { turns: out, shortened } : undefined;
}
