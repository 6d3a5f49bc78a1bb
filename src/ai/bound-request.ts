/**
 * An upper bound of a request's tokens on llama-server that asks the server nothing, so a turn's
 * first token need not wait for an exact count (`/apply-template` alone takes 3–10 ms: the server
 * renders the template, builds the tool-call grammar). The context budget (fit-context.ts) sends
 * a request whose bound fits without counting it, and counts exactly otherwise.
 *
 * The request's *frame* is its chat template rendered with a placeholder in place of each
 * message's text (system messages as they are): learned from the server once per shape — the
 * roles, tool calls, tool definitions and system text in order — and template, in the
 * background, for a request made and for the next turn of the same conversation. The bound is
 * then the frame's bytes plus what the texts may take printed, since every tokenizer llama.cpp
 * runs a chat model with (byte-level BPE, SentencePiece with byte fallback) spends at least one
 * byte of the rendered prompt on a token: a text counts its UTF-8 bytes, and more for what a
 * template printing it as JSON escapes. Checked against the exact count for every chat template
 * llama.cpp bundles (scripts/real-models/real-models-bound.test.ts).
 */

/** Stands for a message's text in a frame: short, and not empty (templates leave out an empty message's parts). */
const PLACEHOLDER = 'x';
/** Tokens beyond the bytes: BOS and EOS, SentencePiece's leading space, a template's date of another length. */
const SLACK = 16;
/** Frames remembered: one a conversation's next turn and one a repeated shape (a new conversation's first turn). */
const FRAMES = 2048;
/** Frames waiting to be learned, at most: a burst of turns learns what it can, and the rest count exactly. */
const PENDING = 64;
/**
 * Learning waits this long after it is asked for: the request the budget has just let through is
 * on its way, and its own rendering and first token come first on the server's cores.
 */
const LEARN_DELAY_MS = 250;

export interface RequestBounds {
  /** The bound of a request (text messages: images already counted apart), or undefined while its frame is unknown. */
  bound(template: string, messages: unknown[], tools: unknown[]): number | undefined;
  /** Learns the request's frame in the background, unless known by then. */
  learn(template: string, messages: unknown[], tools: unknown[]): void;
}

/** `render`: the server's rendering of a request (`/apply-template`), undefined when it cannot. */
export function createRequestBounds(render: (messages: unknown[], tools: unknown[]) => Promise<string | undefined>): RequestBounds {
  const frames = new Map<number | bigint, number>();
  // Asked for, not yet learned: taken apart only when learned, off the path of the turn that asked.
  const pending: { template: string; messages: unknown[]; tools: unknown[] }[] = [];
  let draining = false;
  // One rendering at a time, the server's cores being the answers' first.
  const drain = async () => {
    const seen = new Set<number | bigint>();
    for (let r = pending.shift(); r; r = pending.shift()) {
      const { skeleton } = frameOf(r.messages);
      const key = keyOf(r.template, skeleton, r.tools);
      if (frames.has(key) || seen.has(key)) continue;
      seen.add(key);
      const prompt = await render(skeleton, r.tools);
      if (prompt === undefined) continue;
      if (frames.size >= FRAMES) frames.delete(frames.keys().next().value!);
      frames.set(key, Buffer.byteLength(prompt));
    }
    draining = false;
  };
  return {
    bound(template, messages, tools) {
      const { skeleton, printed } = frameOf(messages);
      const key = keyOf(template, skeleton, tools);
      const frame = frames.get(key);
      if (frame === undefined) return undefined;
      // Most recently used last: the oldest goes first when the map is full.
      frames.delete(key);
      frames.set(key, frame);
      return frame + printed + SLACK;
    },
    learn(template, messages, tools) {
      if (pending.length >= PENDING) return;
      pending.push({ template, messages, tools });
      if (draining) return;
      draining = true;
      setTimeout(() => void drain(), LEARN_DELAY_MS).unref?.();
    },
  };
}

/** The request with each non-system text replaced by the placeholder, and the bytes those texts may take printed, less the placeholders'. */
function frameOf(messages: unknown[]): { skeleton: unknown[]; printed: number } {
  let printed = 0;
  const skeleton = (messages as { role?: string; content?: unknown }[]).map((m) => {
    if (m.role === 'system' || typeof m.content !== 'string' || !m.content) return m;
    printed += printedBytes(m.content) - PLACEHOLDER.length;
    return { ...m, content: PLACEHOLDER };
  });
  return { skeleton, printed };
}

const keyOf = (template: string, skeleton: unknown[], tools: unknown[]) => Bun.hash(JSON.stringify([template, skeleton, tools]));

/**
 * The bytes `text` may take in a rendered prompt: its UTF-8 bytes, or, printed as JSON (Llama 3's
 * and LFM2's templates print a tool's output with `tojson`), with `"`, `\` and control characters
 * escaped (llama-server's templates keep other characters as they are).
 */
export function printedBytes(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x08 || c === 0x0c) n += 2;
    else if (c < 0x20) n += 6;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}
