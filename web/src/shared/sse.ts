/** One frame of an event stream: its id (absent on keepalives) and its JSON data. */
export interface Frame {
  id: string | undefined;
  data: { type: string; [field: string]: unknown };
}

/**
 * Read `text/event-stream` frames from a fetch body. fetch rather than EventSource: Parley's
 * streams are POSTs, and the resume position is sent as `Last-Event-ID` or in the body.
 */
export async function* readFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<Frame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame = parseBlock(block);
        if (frame) yield frame;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function parseBlock(block: string): Frame | undefined {
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue; // comments: the stream's heartbeats
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (!data.length) return undefined;
  return { id, data: JSON.parse(data.join('\n')) };
}
