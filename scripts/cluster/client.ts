/**
 * How scripts/cluster/cluster.test.ts talks to the instances and nginx: JSON calls, and event
 * streams recorded frame by frame (test/sse.ts's reader) with each frame's arrival time.
 */
import { SseReader, type Frame } from '../../test/sse';

// --- calling the API -------------------------------------------------------------------------

/** POST /api/<path> on `base` (an instance or the proxy) with a key. */
export function post(base: string, path: string, body: unknown, key: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${base}/api/${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

/** A JSON call: the status and the parsed body. */
export async function call(base: string, path: string, body: unknown, key: string): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await post(base, path, body, key);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: kept as text for the assertion's message
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

// --- reading event streams -------------------------------------------------------------------

export interface Recorded extends Frame {
  /** When it arrived (ms since epoch). */
  at: number;
}

/**
 * An event stream read in the background (test/sse.ts's reader), every data frame kept with its
 * arrival time. `ended` settles when the stream ends: cleanly (`end`), or cut (`broken`: the
 * instance died, or nginx dropped it).
 */
export class Recorder {
  frames: Recorded[] = [];
  endedAt?: number;
  how?: 'end' | 'broken';
  error?: string;
  readonly ended: Promise<'end' | 'broken'>;
  private reader: SseReader;
  private waiters = new Set<() => void>();

  constructor(readonly res: Response) {
    const reader = (this.reader = new SseReader(res));
    this.ended = (async () => {
      try {
        for (;;) {
          const f = await reader.next();
          if (!f) break;
          this.frames.push({ ...f, at: Date.now() });
          this.wake();
        }
        this.how = 'end';
      } catch (err) {
        this.how = 'broken';
        this.error = String(err);
      }
      this.endedAt = Date.now();
      this.wake();
      return this.how;
    })();
  }

  /** Comment lines seen (`: open`, heartbeats, pings). */
  get comments(): number {
    return this.reader.comments;
  }

  get open(): boolean {
    return this.how === undefined;
  }

  /** Data frames with an id (keepalive frames have none). */
  get withIds(): Recorded[] {
    return this.frames.filter((f) => f.id !== undefined);
  }

  /** Resolves with the first frame (from `from` on) that `match` accepts; rejects after `ms` or at the stream's end. */
  async waitFor(match: (f: Recorded) => boolean, ms: number, what = 'a frame', from = 0): Promise<Recorded> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.frames.slice(from).find(match);
      if (found) return found;
      if (!this.open) throw new Error(`stream ended (${this.how}${this.error ? `: ${this.error}` : ''}) before ${what}; got ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what}; got ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves when the stream has ended; rejects after `ms`. */
  async waitEnd(ms: number, what = 'the end of the stream'): Promise<'end' | 'broken'> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}; got ${this.describe()}`)), ms)));
    try {
      return await Promise.race([this.ended, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.reader.close().catch(() => undefined);
  }

  /** A short account of what arrived, for failure messages. */
  describe(): string {
    const types = this.frames.map((f) => `${f.id ?? '-'}:${f.data?.type}`);
    const shown = types.length > 12 ? [...types.slice(0, 4), '…', ...types.slice(-8)] : types;
    return `${this.frames.length} frames [${shown.join(' ')}]`;
  }

  private wake() {
    for (const w of this.waiters) w();
    this.waiters.clear();
  }
}

/** Open an event stream; the status and body when the answer is not a stream (429, 401…). */
export async function openStream(
  base: string,
  path: string,
  body: unknown,
  key: string,
  headers: Record<string, string> = {},
): Promise<Recorder | { status: number; body: any; headers: Headers }> {
  const res = await post(base, path, body, key, headers);
  if (res.status === 200 && res.headers.get('content-type')?.startsWith('text/event-stream')) return new Recorder(res);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // kept as text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Like openStream, but the stream is required. */
export async function mustStream(base: string, path: string, body: unknown, key: string, headers: Record<string, string> = {}): Promise<Recorder> {
  const r = await openStream(base, path, body, key, headers);
  if (!(r instanceof Recorder)) throw new Error(`${path} via ${base} answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r;
}

/** The sequence number of a chat frame id `<responseId>:<seq>`. */
export function seqOf(id: string | undefined): number {
  const at = id?.lastIndexOf(':') ?? -1;
  return at > 0 ? Number(id!.slice(at + 1)) : NaN;
}

/** Resolves once `check` holds, polling; rejects after `ms`. */
export async function until<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, ms: number, everyMs = 50): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

/** Seconds with one decimal, for the printed figures. */
export const secs = (ms: number) => Math.round(ms / 100) / 10;
