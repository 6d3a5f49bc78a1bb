import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Busboy } from '@fastify/busboy';
import { AppError } from '../http/errors';
import { newId } from '../ids';
import { UPLOAD_FILE_PART } from '../http/upload';

/** Room for the multipart framing and the small fields beside the file, in a body limit. */
export const FRAMING_BYTES = 64 * 1024;
/** Bytes kept from the start of the file for sniffing. */
const HEAD_BYTES = 4096;

export interface ReceivedUpload {
  tempPath: string;
  size: number;
  sha256: string;
  /** The name the client gave, as given (addFile cleans it). */
  filename: string;
  head: Uint8Array;
  fields: Record<string, string>;
}

/**
 * Receive a `multipart/form-data` upload: its `file` part is written to `tempPath` as it
 * arrives, hashed on the way, never held in memory (docs/files.md, "Upload"). At most one file
 * and a few short fields; past `maxBytes` the upload stops and 413 is answered. The temp file is
 * removed on any failure.
 */
export async function receiveUpload(request: Request, maxBytes: number, tempPath: string): Promise<ReceivedUpload> {
  // The pipeline checked the type and the declared length already (src/http/upload.ts).
  const type = request.headers.get('content-type') ?? '';
  if (!request.body) throw new AppError('BAD_REQUEST', { message: 'The upload is empty: send a part named "file".' });

  const fields: Record<string, string> = {};
  let file: Promise<Omit<ReceivedUpload, 'tempPath' | 'fields'>> | undefined;
  let overLimit = false;
  let extraFile = false;
  const parser = Busboy({
    headers: { 'content-type': type },
    limits: { fileSize: maxBytes, files: 1, fields: 8, fieldSize: 4096, parts: 10, headerPairs: 20 },
  });
  parser.on('field', (name: string, value: string) => {
    fields[name] = value;
  });
  parser.on('file', (name, stream, filename) => {
    if (name !== UPLOAD_FILE_PART || file) {
      extraFile = true;
      stream.resume();
      return;
    }
    const hashing = new HashingCounter();
    stream.on('limit', () => (overLimit = true));
    file = pipeline(stream, hashing, createWriteStream(tempPath, { mode: 0o600 })).then(() => ({
      size: hashing.size,
      sha256: hashing.digest(),
      filename: filename ?? '',
      head: hashing.head,
    }));
  });
  // Past `files: 1` the parser drops a second file without a 'file' event: it says so here.
  parser.on('filesLimit', () => (extraFile = true));
  try {
    await pipeline(Readable.fromWeb(request.body as never), parser);
    const received = file ? await file : undefined;
    if (overLimit) throw tooLarge(maxBytes);
    if (extraFile) throw new AppError('BAD_REQUEST', { message: 'Send one file, in a part named "file".' });
    if (!received) throw new AppError('BAD_REQUEST', { message: 'The upload has no part named "file".' });
    if (received.size === 0) throw new AppError('BAD_REQUEST', { message: 'The file is empty.' });
    return { ...received, tempPath, fields };
  } catch (err) {
    await file?.catch(() => undefined);
    await rm(tempPath, { force: true });
    if (err instanceof AppError) throw err;
    if (overLimit) throw tooLarge(maxBytes);
    if (request.signal.aborted) throw new AppError('CLIENT_CLOSED_REQUEST', { message: 'The client left during the upload.' });
    throw new AppError('BAD_REQUEST', { message: `The upload is not valid multipart/form-data: ${(err as Error).message}` });
  }
}

export const tempName = () => `upload-${newId()}`;

const tooLarge = (maxBytes: number) => new AppError('PAYLOAD_TOO_LARGE', { message: `The file is larger than ${maxBytes} bytes (PARLEY_FILES_MAX_BYTES).` });


/** Passes the bytes through, hashing and counting them and keeping the first few. */
class HashingCounter extends Transform {
  size = 0;
  head = new Uint8Array(0);
  private readonly hash = new Bun.CryptoHasher('sha256');
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    if (this.head.length < HEAD_BYTES) {
      const more = chunk.subarray(0, HEAD_BYTES - this.head.length);
      const head = new Uint8Array(this.head.length + more.length);
      head.set(this.head);
      head.set(more, this.head.length);
      this.head = head;
    }
    this.size += chunk.length;
    done(null, chunk);
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}
