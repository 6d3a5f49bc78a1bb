import { messageFrame, rawChunk } from '../src/http/sse';

/** Reading server-sent events in tests: frames as `{id?, event?, data, raw}`, comments counted apart. */
export interface Frame {
  id?: string;
  event?: string;
  data: any;
}

export class SseReader {
  private reader: ReadableStreamDefaultReader<Uint8Array | string>;
  private buf = '';
  private decoder = new TextDecoder();
  comments = 0;
  /** The comment lines seen, in order (`: ping`, …). */
  commentLines: string[] = [];
  done = false;

  constructor(res: Response) {
    this.reader = res.body!.getReader() as ReadableStreamDefaultReader<Uint8Array | string>;
  }

  /** The next data frame (comment lines are skipped and counted); undefined at the end. */
  async next(): Promise<Frame | undefined> {
    while (true) {
      const at = this.buf.indexOf('\n\n');
      if (at >= 0) {
        const block = this.buf.slice(0, at);
        this.buf = this.buf.slice(at + 2);
        const frame: Partial<Frame> & { dataLines?: string[] } = {};
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const i = line.indexOf(':');
          const key = line.slice(0, i);
          const value = line.slice(i + 1).replace(/^ /, '');
          if (key === 'data') data.push(value);
          else if (key === 'id') frame.id = value;
          else if (key === 'event') frame.event = value;
        }
        if (!data.length) {
          this.comments++;
          this.commentLines.push(...block.split('\n').filter((l) => l.startsWith(':')));
          continue;
        }
        return { id: frame.id, event: frame.event, data: JSON.parse(data.join('\n')) };
      }
      const { done, value } = await this.reader.read();
      if (done) {
        this.done = true;
        return undefined;
      }
      this.buf += typeof value === 'string' ? value : this.decoder.decode(value, { stream: true });
    }
  }

  /** Frames until the stream ends (or `max` frames). */
  async all(max = Infinity): Promise<Frame[]> {
    const out: Frame[] = [];
    while (out.length < max) {
      const f = await this.next();
      if (!f) break;
      out.push(f);
    }
    return out;
  }

  /** Frames until one of `type` (included); the stream ending first is an error naming what came. */
  async until(type: string): Promise<Frame[]> {
    const out: Frame[] = [];
    for (;;) {
      const f = await this.next();
      if (!f) throw new Error(`the stream ended before ${type}: ${out.map((o) => o.data.type).join(', ')}`);
      out.push(f);
      if (f.data.type === type) return out;
    }
  }

  /** Disconnect, as a client closing the socket. */
  async close(): Promise<void> {
    await this.reader.cancel();
  }
}

export const readFrames = (res: Response, max?: number) => new SseReader(res).all(max);
export const typesOf = (frames: Frame[]) => frames.map((f) => f.data.type);

/** An `event: message` frame of `data`, as a stream chunk (for test-only streams). */
export const sseMessage = (frame: { id?: string; retry?: number; data: unknown }) => rawChunk(messageFrame(JSON.stringify(frame.data), frame.id, frame.retry));
