import { Busboy, type BusboyFileStream } from '@fastify/busboy';
import { AppError } from '../http/errors';
import { UPLOAD_FILE_PART } from '../http/upload';
import { SNIFF_BYTES, sniffAudio, type AudioFormat } from './audio-format';

/** A text field's longest value: a language code, or a prompt of a few hundred words. */
const FIELD_BYTES = 4096;
const MAX_FIELDS = 8;

export interface ReceivedAudio {
  /** The text parts, as sent (the route validates them). */
  fields: Record<string, string>;
  /** The recording, named and typed by what its bytes are (the name is what OpenAI goes by). */
  audio: File;
  format: AudioFormat;
}

/**
 * Read an upload's `file` part into memory, as it arrives: the recording goes on to the
 * speech-to-text server whole, so it is held in memory, never written to disk. Reading stops at the
 * first refusal: past `maxFileBytes` of audio or `maxBodyBytes` of body (413; the pipeline already
 * refused a declared length past the body limit), or first bytes that are no accepted recording
 * (400), so neither costs the rest of the upload.
 */
export async function receiveAudio(request: Request, limits: { maxFileBytes: number; maxBodyBytes: number }): Promise<ReceivedAudio> {
  let parser: ReturnType<typeof Busboy>;
  try {
    parser = Busboy({
      headers: { 'content-type': request.headers.get('content-type') ?? '' },
      // The `file` part is the file even when a client sends it without a file name.
      isPartAFile: (name, _type, filename) => name === UPLOAD_FILE_PART || filename !== undefined,
      limits: { fileSize: limits.maxFileBytes, files: 1, fields: MAX_FIELDS, fieldSize: FIELD_BYTES, parts: MAX_FIELDS + 1, headerPairs: 20 },
    });
  } catch (err) {
    throw malformed(err);
  }
  const fields: Record<string, string> = Object.create(null);
  const chunks: Buffer[] = [];
  let size = 0;
  let sawFile = false;
  let format: AudioFormat | undefined;
  let failure: AppError | undefined;
  const fail = (err: AppError) => void (failure ??= err);
  const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', { message: `The audio is larger than ${limits.maxFileBytes} bytes (PARLEY_STT_MAX_BYTES).` });
  const sniff = () => {
    const found = sniffAudio(headOf(chunks));
    if ('refusal' in found) fail(new AppError('BAD_REQUEST', { message: found.refusal }));
    else format = found;
  };

  parser.on('field', (name, value, nameTruncated, valueTruncated) => {
    if (nameTruncated || valueTruncated) fail(new AppError('PAYLOAD_TOO_LARGE', { message: `A form field is longer than ${FIELD_BYTES} bytes.` }));
    else fields[name] = value;
  });
  parser.on('file', (name: string, stream: BusboyFileStream) => {
    if (name !== UPLOAD_FILE_PART || sawFile) {
      stream.resume();
      fail(new AppError('BAD_REQUEST', { message: `Send one recording, in a part named "${UPLOAD_FILE_PART}".` }));
      return;
    }
    sawFile = true;
    stream.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (!format && size >= SNIFF_BYTES) sniff();
    });
    stream.on('limit', () => fail(tooLarge()));
    // A body cut short ends the part with an error: unheard, it would be thrown at the process.
    stream.on('error', (err: Error) => fail(malformed(err)));
    stream.on('end', () => {
      if (!format) sniff(); // shorter than the sniffing needs
    });
  });
  for (const event of ['fieldsLimit', 'filesLimit', 'partsLimit'])
    parser.on(event, () => fail(new AppError('BAD_REQUEST', { message: `An upload has one part named "${UPLOAD_FILE_PART}" and at most ${MAX_FIELDS} text fields.` })));
  const parsed = new Promise<void>((resolve, reject) => {
    parser.on('finish', resolve);
    parser.on('error', reject);
  });
  parsed.catch(() => undefined); // awaited below, once everything was written

  const reader = request.body?.getReader();
  let received = 0;
  try {
    while (reader && !failure) {
      const { value, done } = await reader.read();
      if (done) break;
      received += value.byteLength;
      if (received > limits.maxBodyBytes) fail(new AppError('PAYLOAD_TOO_LARGE', { message: `The upload is larger than ${limits.maxBodyBytes} bytes.` }));
      else if (!parser.write(value)) await Promise.race([new Promise((resolve) => parser.once('drain', resolve)), parsed.catch(() => undefined)]);
      // The part's bytes reach its listeners on later ticks: until the first ones were sniffed,
      // let them through before reading on, so a refused type costs no more of the upload.
      if (!format) await new Promise((resolve) => setImmediate(resolve));
    }
    if (!failure) {
      parser.end();
      await parsed;
    }
  } catch (err) {
    // A client that leaves mid-upload is no server error (src/http/body.ts does the same).
    if (request.signal.aborted) fail(new AppError('CLIENT_CLOSED_REQUEST', { cause: err }));
    else fail(err instanceof AppError ? err : malformed(err));
  }
  if (failure) {
    await reader?.cancel().catch(() => undefined);
    parser.destroy();
    throw failure;
  }
  if (!sawFile) throw new AppError('BAD_REQUEST', { message: `The upload has no part named "${UPLOAD_FILE_PART}".` });
  if (!format) throw new AppError('BAD_REQUEST', { message: 'The audio file is empty.' });
  return { fields, format, audio: new File(chunks, `audio.${format.name}`, { type: format.mimeType }) };
}

const malformed = (err: unknown) =>
  new AppError('BAD_REQUEST', { message: `The upload is not valid multipart/form-data (${err instanceof Error ? err.message : String(err)}).` });

/** The first `SNIFF_BYTES` of the file, however it was cut into chunks. */
function headOf(chunks: Buffer[]): Uint8Array {
  const head: Buffer[] = [];
  let bytes = 0;
  for (const chunk of chunks) {
    if (bytes >= SNIFF_BYTES) break;
    head.push(chunk);
    bytes += chunk.length;
  }
  return Buffer.concat(head).subarray(0, SNIFF_BYTES);
}
