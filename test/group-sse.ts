/** A small SSE reader for tests: parses frames as an EventSource would, and keeps comments too. */
export interface Frame {
  event?: string;
  id?: string;
  retry?: number;
  data?: any;
  comment?: string;
}

export interface SseReader {
  res: Response;
  /** Next frame (comments included); rejects after `ms` or when the stream ends or fails. */
  next(ms?: number): Promise<Frame>;
  /** Next data frame, skipping comments. */
  nextData(ms?: number): Promise<Frame & { data: any }>;
  /** Collect `n` data frames. */
  take(n: number, ms?: number): Promise<(Frame & { data: any })[]>;
  close(): Promise<void>;
}

export function readSse(res: Response): SseReader {
  // In process (app.handle) Elysia may enqueue strings; over a socket chunks are bytes.
  const reader = (res.body as ReadableStream<Uint8Array | string>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const frames: Frame[] = [];
  let ended: Error | undefined;
  // A read that lost a race against the timeout is still pending: keep it, or its chunk is lost.
  let pendingRead: Promise<{ done: boolean; value?: Uint8Array | string } | { error: Error }> | undefined;

  const parse = () => {
    let i: number;
    while ((i = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      const f: Frame = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) f.comment = line.slice(1).trim();
        else {
          const c = line.indexOf(':');
          const key = line.slice(0, c);
          const value = line.slice(c + 1).replace(/^ /, '');
          if (key === 'data') f.data = f.data === undefined ? value : `${f.data}\n${value}`;
          else if (key === 'id') f.id = value;
          else if (key === 'event') f.event = value;
          else if (key === 'retry') f.retry = Number(value);
        }
      }
      if (typeof f.data === 'string') f.data = JSON.parse(f.data);
      frames.push(f);
    }
  };

  const next = async (ms = 2000): Promise<Frame> => {
    const deadline = Date.now() + ms;
    while (!frames.length) {
      if (ended) throw ended;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for an SSE frame');
      let timer: ReturnType<typeof setTimeout> | undefined;
      const r = await Promise.race([
        (pendingRead ??= reader.read().catch((e: unknown) => ({ error: e as Error }))),
        new Promise<'timeout'>((res) => (timer = setTimeout(() => res('timeout'), left))),
      ]);
      clearTimeout(timer);
      if (r === 'timeout') throw new Error('timed out waiting for an SSE frame');
      pendingRead = undefined;
      if ('error' in r) ended = new Error(`stream failed: ${r.error}`);
      else if (r.done) ended = new Error('stream ended');
      else {
        buffer += typeof r.value === 'string' ? r.value : decoder.decode(r.value, { stream: true });
        parse();
      }
    }
    return frames.shift()!;
  };

  const nextData = async (ms = 2000) => {
    for (;;) {
      const f = await next(ms);
      if (f.data !== undefined) return f as Frame & { data: any };
    }
  };

  return {
    res,
    next,
    nextData,
    async take(n, ms = 2000) {
      const out: (Frame & { data: any })[] = [];
      while (out.length < n) out.push(await nextData(ms));
      return out;
    },
    close: () => reader.cancel().catch(() => {}),
  };
}
