/** Read a fetch() event stream frame by frame, stamping each frame with the time its bytes arrived. */
import { nowMs } from './stats';

export interface SseFrame {
  event?: string;
  id?: string;
  data: string;
  /** When the network chunk holding the frame's end arrived (ms since the epoch). */
  at: number;
}

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buf = '';
  let cur: { event?: string; id?: string; data: string[] } = { data: [] };
  for await (const chunk of body) {
    const at = nowMs();
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line === '') {
        if (cur.data.length) yield { event: cur.event, id: cur.id, data: cur.data.join('\n'), at };
        cur = { data: [] };
      } else if (line.startsWith('data:')) cur.data.push(line.slice(line[5] === ' ' ? 6 : 5));
      else if (line.startsWith('event:')) cur.event = line.slice(6).trim();
      else if (line.startsWith('id:')) cur.id = line.slice(3).trim();
    }
  }
}
