import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { TransformKind, type TObject, type TSchema } from '@sinclair/typebox';
import { isUtf8 } from 'node:buffer';
import { AppError, invalidInput, type ValidationIssue } from './errors';
import { checkJsonShape } from './check-json-shape';
import { releaseNow } from '../images/release-now';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const utf8Unchecked = new TextDecoder('utf-8');
/**
 * Above this, a body is validated by `isUtf8` (SIMD) and then decoded unchecked: 2.4 against
 * 6.2 ms for an image's 13 MB data URL. Below it the fatal decoder alone is the quicker.
 */
const LARGE_BODY = 64 * 1024;

/** The body as text (a BOM dropped), or undefined when it is not valid UTF-8. */
function decodeUtf8(buf: Uint8Array): string | undefined {
  if (buf.byteLength > LARGE_BODY) return isUtf8(buf) ? utf8Unchecked.decode(buf) : undefined;
  try {
    return utf8.decode(buf);
  } catch {
    return undefined;
  }
}

/**
 * Receive a request body, bounded: 413 over `maxBytes` (from the declared length before reading
 * when there is one), 415 for a non-empty body that is not JSON. Decoding and parsing are
 * `parseJsonBody`'s: operations that wait for a turn (src/http/turnstile.ts) wait between the two,
 * holding the bytes only.
 */
export async function readBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  const buf = await readBoundedBody(request, maxBytes);
  // A body must say it is JSON. Without a Content-Type it is refused too: a browser sends a Blob
  // body with no type and no preflight, so accepting one would let a page on a sibling subdomain
  // post with the session cookie (SameSite=Lax does not stop same-site requests).
  if (buf.byteLength) {
    const type = request.headers.get('content-type');
    if (type !== 'application/json' && !(type && /^application\/json\s*(;|$)/i.test(type)))
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', { message: 'Content-Type must be application/json' });
  }
  return buf;
}

/**
 * The body, at most `maxBytes` (413 past it), whatever its type: for the routes that take what
 * is not JSON and check its type themselves (the OAuth token endpoint's form).
 */
export async function readBoundedBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  const headers = request.headers;
  const length = headers.get('content-length');
  if (length !== null && Number(length) > maxBytes) throw new AppError('PAYLOAD_TOO_LARGE');
  // With a Content-Length (bounded just above) the server reads no more than that: one
  // arrayBuffer() is far cheaper than a stream reader (bench/RESULTS.md). Chunked bodies, which
  // declare no length, are read piece by piece and cut off at the limit.
  let buf: Uint8Array;
  try {
    buf = length !== null ? new Uint8Array(await request.arrayBuffer()) : await readBounded(request, maxBytes);
  } catch (err) {
    // A client that leaves mid-upload is no server error: 499, logged as a request, not an error.
    throw request.signal.aborted && !(err instanceof AppError) ? new AppError('CLIENT_CLOSED_REQUEST', { cause: err }) : err;
  }
  if (buf.byteLength > maxBytes) throw new AppError('PAYLOAD_TOO_LARGE');
  return buf;
}

/**
 * A received body as JSON. No body, or an empty one, reads as `{}` so operations without input
 * accept all three forms the interface allows. Its shape is bounded before it is decoded or
 * parsed (413 past the bounds), so a parse costs about what the body weighs. A large body's
 * bytes are emptied once decoded: the caller must not read them afterwards.
 */
export function parseJsonBody(buf: Uint8Array): unknown {
  if (buf.byteLength === 0) return {};
  checkJsonShape(buf);
  const text = decodeUtf8(buf);
  if (text === undefined) throw new AppError('BAD_REQUEST', { message: 'Request body is not valid UTF-8' });
  // Decoded, the bytes are done with (the callers drop them): a large body's are given back now,
  // before the parse makes its values, not when the collector gets to them. A 27 MB string body
  // otherwise held its bytes, its text and the parsed string at once (bench/RESULTS.md, "Idle memory").
  if (buf.byteLength > LARGE_BODY) releaseNow(buf);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('BAD_REQUEST', { message: 'Malformed JSON request body' });
  }
}

/**
 * Read the body, stopping as soon as it passes `maxBytes`: a chunked upload without a
 * Content-Length is bounded too, so memory never holds more than the limit.
 */
async function readBounded(request: Request, maxBytes: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new AppError('PAYLOAD_TOO_LARGE');
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * Formats of the string branch Elysia puts beside a number or a boolean (`t.Integer`, `t.Numeric`,
 * `t.BooleanString`) so that a query string's `"5"` passes, with a transform to convert it. The
 * validator here checks and never transforms: `"0"` reached handlers as a string and its bounds
 * went unchecked (`limit: "1000000"` listed everything). Inputs are JSON, where a number is a
 * number, so the branch is dropped and a string there is a 400 like any other wrong type.
 */
const STRING_TWINS = new Set(['integer', 'numeric', 'boolean']);

/**
 * The schema as validation applies it: numbers and booleans are JSON numbers and booleans only.
 * With `close`, every object that does not say otherwise also refuses unknown fields: the exact
 * check of `compileInput`'s fast path.
 */
function inputSchema(schema: TSchema, close: boolean): TSchema {
  const s = schema as TSchema & Record<string, unknown>;
  if (Array.isArray(s.anyOf)) {
    const branches = (s.anyOf as (TSchema & Record<string, unknown>)[]).filter((b) => !(b.type === 'string' && STRING_TWINS.has(b.format as string)));
    // Elysia's twin is a transformed union of the two: what is left is the plain type, bounds included.
    if (branches.length === 1 && branches.length < s.anyOf.length) return inputSchema(branches[0]!, close);
    const union = { ...s, anyOf: branches.map((b) => inputSchema(b, close)) } as TSchema & { [TransformKind]?: unknown };
    delete union[TransformKind];
    return union;
  }
  if (s.type === 'object' && s.properties) {
    // Without a prototype: `Value.Clean` keeps a field when `key in properties`, which would keep
    // `__proto__` and `constructor` (Object.prototype's names) in the handler's input.
    const properties = Object.assign(
      Object.create(null) as Record<string, TSchema>,
      Object.fromEntries(Object.entries(s.properties as Record<string, TSchema>).map(([k, v]) => [k, inputSchema(v, close)])),
    );
    return { ...s, properties, ...(close ? { additionalProperties: s.additionalProperties ?? false } : {}) } as TSchema;
  }
  if (s.type === 'array' && s.items) return { ...s, items: inputSchema(s.items as TSchema, close) } as TSchema;
  return schema;
}

/**
 * An output's schema as /api/openapi.json and /api/docs state it: what a handler returns, as JSON
 * sends it. Elysia's string twins describe how an input may be written (a query string's `"5"`);
 * an answer's number is always a number, and a twin there made contract tests refuse correct
 * answers and generated clients type counts `string | number`. So rows may keep writing
 * `t.Integer()` for outputs, and the document says `integer`.
 */
export const outputSchema = (schema: TSchema): TSchema => inputSchema(schema, false);

export interface InputValidator<T> {
  (value: unknown): T;
  /** What the validator accepts, as documented in /api/openapi.json. */
  schema: TSchema;
}

/**
 * A validator for an operation's input. Unknown fields are accepted and stripped, so handlers
 * never see them, as the interface's RPC stack (zod objects) does: a client built for a newer
 * version of the interface keeps working. A known field of the wrong type is still a 400.
 * Bodies without unknown fields, nearly all of them, pass one compiled exact check and nothing
 * else; the others pass the open check and are cleaned.
 */
export function compileInput<T>(schema: TObject): InputValidator<T> {
  const open = inputSchema(schema, false);
  // Compiled at the operation's first request, not when the app is built: each check is code
  // made with `new Function`, and compiling every operation's two at start held ~7 MB of a 1 GB
  // board's idle memory for operations most servers never see (bench/RESULTS.md, "Idle memory").
  let compiled: { exact: TypeCheck<TSchema>; check: TypeCheck<TSchema> } | undefined;
  const validate = ((value: unknown) => {
    const { exact, check } = (compiled ??= { exact: TypeCompiler.Compile(inputSchema(schema, true)), check: TypeCompiler.Compile(open) });
    if (exact.Check(value)) return value as T;
    if (check.Check(value)) return Value.Clean(open, value) as T;
    const issues: ValidationIssue[] = [];
    for (const e of check.Errors(value)) {
      issues.push({ path: e.path.split('/').filter(Boolean).map((p) => (/^\d+$/.test(p) ? Number(p) : p)), message: e.message });
      if (issues.length >= 20) break;
    }
    throw invalidInput(issues);
  }) as InputValidator<T>;
  validate.schema = open;
  return validate;
}
