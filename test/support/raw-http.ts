import { connect, type Socket } from 'node:net';

/**
 * HTTP/1.1 written by hand over a socket, for what fetch() cannot send: a Host header of the
 * test's choosing (fetch sets it from the URL), none at all, or an upload cut off half-way.
 */

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Map<string, string>;
  body: string;
}

const TIMEOUT_MS = 15_000;

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Send one request and read the answer until the server closes the connection. `head` is the
 * request line and headers, one per line, without the blank line; `Connection: close` is added.
 */
export async function rawRequest(port: number, head: string, body: string | Uint8Array = ''): Promise<RawResponse> {
  const socket = await open(port);
  const chunks: Buffer[] = [];
  const ended = new Promise<void>((resolve, reject) => {
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('end', resolve);
    socket.on('error', reject);
    socket.setTimeout(TIMEOUT_MS, () => reject(new Error(`no answer to ${head.split('\r\n')[0]}`)));
  });
  socket.write(`${head}\r\nConnection: close\r\n\r\n`);
  if (body.length) socket.write(body);
  try {
    await ended;
  } finally {
    socket.destroy();
  }
  return parseResponse(Buffer.concat(chunks));
}

function parseResponse(raw: Buffer): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`not an HTTP response: ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`);
  const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  let body = raw.subarray(end + 4);
  if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') body = dechunk(body);
  return { status: Number(statusLine!.split(' ')[1]), headers, body: body.toString('utf8') };
}

function dechunk(buf: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at);
    const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/**
 * Start an upload that declares `declared` bytes, send `sent` of them, and close the socket
 * without waiting for an answer: a client that goes away mid-upload.
 */
export async function abandonUpload(port: number, head: string, declared: number, sent: number): Promise<void> {
  const socket = await open(port);
  socket.on('error', () => undefined); // the server may reset the connection as it goes
  await new Promise<void>((resolve) => socket.write(`${head}\r\nContent-Length: ${declared}\r\n\r\n`, () => resolve()));
  await new Promise<void>((resolve) => socket.write(Buffer.alloc(sent, 0x20), () => resolve()));
  await new Promise<void>((resolve) => socket.end(resolve));
  socket.destroy();
}
