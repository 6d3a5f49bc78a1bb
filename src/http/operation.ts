import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { AppDeps } from '../deps';
import type { Config } from '../config';
import type { Principal } from '../auth/authenticate';
import type { User } from '../db/schema';
import type { RateLimitBucket } from './rate-limit';
import type { Turnstile } from './turnstile';
import type { PushStream } from './push-stream';
import type { CapSetting } from './user-caps';

/** What a handler receives: plain values, never the framework's context. */
export interface OpContext<I> {
  input: I;
  user: User;
  principal: Principal;
  deps: AppDeps;
  request: Request;
  /** Headers to add to a successful response (e.g. Set-Cookie, Deprecation). */
  responseHeaders: Record<string, string>;
  requestId: string;
}

/** What a public operation's handler receives: the caller may have sent no credential. */
export type PublicOpContext<I> = Omit<OpContext<I>, 'user' | 'principal'> & { user?: User; principal?: Principal };

export type OpResult<O> = O | Response | AsyncGenerator<unknown, void, unknown> | PushStream;

interface OperationFields<I extends TObject, O extends TSchema> {
  path: `${string}/${string}`;
  summary: string;
  description?: string;
  input: I;
  /** Response schema; for `sse` operations, the schema of one event's data. */
  output: O;
  /**
   * `binary`: the handler returns a Response whose body is bytes of one of `mediaTypes` (audio),
   * streamed as they come; OpenAPI documents its 200 with those types.
   */
  kind?: 'json' | 'sse' | 'binary';
  /** `binary` only: the content types the 200 may carry. */
  mediaTypes?: readonly string[];
  /**
   * An upload: the body is `multipart/form-data`, not JSON. The pipeline refuses another content
   * type (415), a declared length past the body limit (413) and a cookie-authenticated post from
   * another site (403), reads nothing, and hands the body to the handler unread (`request`),
   * after the rate limit: the handler streams it where it belongs and validates its fields
   * itself. `input` documents those fields in OpenAPI, beside the `file` part (src/http/upload.ts).
   */
  upload?: boolean;
  /** Error statuses this operation can answer besides 400/401 (documented in OpenAPI). */
  errors?: readonly number[];
  deprecated?: boolean;
  /**
   * Admins only (`users.is_admin`): any other caller gets 403 once the input is valid, before the
   * handler runs, so no handler of the administration API can forget the check (src/admin/).
   */
  admin?: boolean;
  /**
   * Per-user token bucket (sized by the config table), checked after authentication and
   * validation: `rateLimit: 'ai'` for operations that call an AI provider, `'write'` for frequent
   * writes. Over the limit → 429 with Retry-After.
   */
  rateLimit?: RateLimitBucket;
  /**
   * The largest body this operation reads, in bytes (413 past it): a number, or one read from the
   * settings. Default `SMALL_BODY_BYTES`. `PARLEY_MAX_BODY_BYTES` caps every row.
   */
  maxBodyBytes?: number | ((config: Config) => number);
  /**
   * The setting that bounds what the body carries (a widget message's size): a body past the
   * row's limit is refused with that cap's 413, naming the setting, rather than a bare one.
   */
  bodyCap?: CapSetting;
  /**
   * JSON only: the turnstile requests of this operation wait at, once their body is received and
   * before it is parsed, for operations that hold much memory while they run (src/http/turnstile.ts).
   */
  turns?: (deps: AppDeps) => Turnstile;
  /**
   * SSE only: the frame sent when the server shuts down while this stream is open (default: a
   * `retry:` hint and a comment, which EventSource clients ignore before reconnecting).
   */
  finalFrame?: () => unknown;
}

/**
 * The default body limit: enough for every input made of ids, names and short text (64 KiB; a
 * 200-character name is 1.2 KB even with every character escaped as `\uXXXX`). Bounding the
 * body per operation bounds what reading and parsing it can cost: most operations never need
 * the megabytes that image-carrying ones do (docs/api.md, "Body limits").
 */
export const SMALL_BODY_BYTES = 64 * 1024;

/**
 * For operations whose input carries an image as a data URL: the base64 of the largest image
 * Parley converts (4/3 of `PARLEY_IMAGE_MAX_BYTES`) and room for the rest of the input.
 */
export const IMAGE_BODY_BYTES = (config: Config) => Math.ceil(config.imageMaxBytes / 3) * 4 + SMALL_BODY_BYTES;

/** The body limit of a row under the given settings. */
export function bodyLimitOf(op: Pick<OperationFields<TObject, TSchema>, 'maxBodyBytes'>, config: Config): number {
  const own = typeof op.maxBodyBytes === 'function' ? op.maxBodyBytes(config) : (op.maxBodyBytes ?? SMALL_BODY_BYTES);
  return Math.min(own, config.maxBodyBytes);
}

type Handler<C, O extends TSchema> = (ctx: C) => OpResult<Static<O>> | Promise<OpResult<Static<O>>>;

/**
 * One row of the route table: `POST /api/<path>`. The same row feeds the router, input
 * validation, the OpenAPI document and the authorisation-matrix test. `public: true` rows answer callers without a credential too (their
 * handler sees `user`/`principal` only when one was sent); every other row is 401 without one.
 */
export type Operation<I extends TObject = TObject, O extends TSchema = TSchema> = OperationFields<I, O> &
  ({ public?: false; handler: Handler<OpContext<Static<I>>, O> } | { public: true; handler: Handler<PublicOpContext<Static<I>>, O> });

export function defineOperation<I extends TObject, O extends TSchema>(op: Operation<I, O>): Operation<I, O> {
  return op;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOperation = Operation<any, any>;
