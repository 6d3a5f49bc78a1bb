/**
 * A linear server-sent-events reader for upstream AI streams. The SDK still builds, sends and
 * checks the request (`.asResponse()`); only the body is parsed here, because the SDK's decoder
 * copies the rest of its buffer for every event, which turns a fast local model's large chunks
 * into quadratic work (20,000 deltas took seconds instead of milliseconds).
 */
export async function* parseSseJson(body: ReadableStream<Uint8Array> | null, signal?: AbortSignal): AsyncGenerator<any> {
  for await (const batch of parseSseBatches(body, signal)) yield* batch;
}

/** The events of each network chunk as one array: one await per chunk, not per event. */
export async function* parseSseBatches(body: ReadableStream<Uint8Array> | null, signal?: AbortSignal): AsyncGenerator<any[]> {
  if (!body) return;
  const decoder = new TextDecoder();
  let buf = '';
  const reader = body.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let start = 0;
      let end: number;
      const batch: any[] = [];
      // Most servers end lines with \n only: then one search per event is enough.
      const hasCr = buf.includes('\r');
      let finished = false;
      while ((end = nextBoundary(buf, start, hasCr)) >= 0) {
        const data = dataOf(buf.slice(start, end));
        start = end + (buf[end] === '\r' ? 4 : 2);
        if (data === undefined) continue;
        if (data === '[DONE]') {
          finished = true;
          break;
        }
        batch.push(JSON.parse(data));
      }
      buf = buf.slice(start);
      if (batch.length) yield batch;
      if (finished) return;
    }
    const data = dataOf(buf + decoder.decode());
    if (data !== undefined && data !== '[DONE]') yield [JSON.parse(data)];
  } finally {
    if (signal?.aborted !== true) await reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
}

function nextBoundary(buf: string, from: number, hasCr: boolean): number {
  const lf = buf.indexOf('\n\n', from);
  if (!hasCr) return lf;
  const crlf = buf.indexOf('\r\n\r\n', from);
  return crlf >= 0 && (lf < 0 || crlf < lf) ? crlf : lf;
}

/** The joined `data:` lines of one event block, or undefined when it has none (comments, ids). */
function dataOf(block: string): string | undefined {
  // Fast path: one `data: ` line, the shape every OpenAI-compatible server sends.
  const nl = block.indexOf('\ndata: ');
  const at = block.startsWith('data: ') ? 0 : nl >= 0 ? nl + 1 : -1;
  if (at >= 0 && block.indexOf('\n', at) < 0 && !block.endsWith('\r')) return block.slice(at + 6);
  let data: string | undefined;
  for (const raw of block.split('\n')) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!line.startsWith('data:')) continue;
    const v = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    data = data === undefined ? v : `${data}\n${v}`;
  }
  return data;
}
