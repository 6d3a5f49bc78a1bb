/**
 * A minimal HTTP/1.1 client for one server-sent-event stream over a raw socket (Bun.connect).
 * Thousands of these fit in one process, unlike fetch() with its connection pool: the figures
 * hold up to 10,000 streams. Handles chunked transfer encoding; reports comment lines
 * (heartbeats) and `data:` payloads.
 */
import type { Socket } from 'bun';

export interface SseHandlers {
  onHead(status: number): void;
  onData(data: string): void;
  onComment(): void;
  onClose(): void;
}

export class SseConnection {
  private head: Buffer = Buffer.alloc(0);
  private headDone = false;
  private chunked = false;
  private state: 'size' | 'data' | 'crlf' | 'end' = 'size';
  private chunkLeft = 0;
  private pending: Buffer = Buffer.alloc(0);
  private readonly decoder = new TextDecoder();
  private text = '';
  private data: string[] = [];
  private socket?: Socket;
  bytes = 0;

  constructor(
    private readonly handlers: SseHandlers,
    /** Only count bytes, never parse: the cheapest possible subscriber. */
    private readonly drainOnly = false,
  ) {}

  async open(host: string, port: number, path: string, headers: Record<string, string>, body: string): Promise<void> {
    const req =
      `POST ${path} HTTP/1.1\r\nhost: ${host}:${port}\r\naccept: text/event-stream\r\ncontent-type: application/json\r\n` +
      Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('') +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    this.socket = await Bun.connect({
      hostname: host,
      port,
      socket: {
        open: (s) => void s.write(req),
        data: (_s, chunk) => this.receive(chunk),
        close: () => this.handlers.onClose(),
        error: () => this.handlers.onClose(),
        connectError: () => this.handlers.onClose(),
      },
    });
  }

  close(): void {
    this.socket?.end();
  }

  private receive(chunk: Buffer): void {
    this.bytes += chunk.length;
    let rest: Buffer = chunk;
    if (!this.headDone) {
      this.head = Buffer.concat([this.head, chunk]);
      const end = this.head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headText = this.head.subarray(0, end).toString('latin1');
      rest = this.head.subarray(end + 4);
      this.headDone = true;
      this.chunked = /\r\ntransfer-encoding:\s*chunked/i.test(headText);
      this.handlers.onHead(Number(headText.split(' ')[1]));
    }
    if (this.drainOnly) return;
    if (!this.chunked) return this.feed(this.decoder.decode(rest, { stream: true }));
    this.pending = this.pending.length ? Buffer.concat([this.pending, rest]) : rest;
    this.unchunk();
  }

  /** Strip chunked framing (sizes count bytes, so this works on bytes, then decodes). */
  private unchunk(): void {
    let buf = this.pending;
    while (buf.length) {
      if (this.state === 'size') {
        const nl = buf.indexOf('\r\n');
        if (nl < 0) break;
        this.chunkLeft = parseInt(buf.subarray(0, nl).toString('latin1'), 16);
        buf = buf.subarray(nl + 2);
        this.state = this.chunkLeft === 0 ? 'end' : 'data';
      } else if (this.state === 'data') {
        const take = Math.min(this.chunkLeft, buf.length);
        this.feed(this.decoder.decode(buf.subarray(0, take), { stream: true }));
        buf = buf.subarray(take);
        this.chunkLeft -= take;
        if (this.chunkLeft === 0) this.state = 'crlf';
      } else if (this.state === 'crlf') {
        if (buf.length < 2) break;
        buf = buf.subarray(2);
        this.state = 'size';
      } else break;
    }
    this.pending = buf;
  }

  private feed(s: string): void {
    this.text += s;
    let nl: number;
    while ((nl = this.text.indexOf('\n')) >= 0) {
      const line = this.text.slice(0, nl).replace(/\r$/, '');
      this.text = this.text.slice(nl + 1);
      if (line === '') {
        if (this.data.length) this.handlers.onData(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith(':')) this.handlers.onComment();
      else if (line.startsWith('data:')) this.data.push(line.slice(line[5] === ' ' ? 6 : 5));
    }
  }
}
