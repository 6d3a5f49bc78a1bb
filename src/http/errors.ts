import { maskSecretsIn } from '../mask-secrets';
/**
 * The error table. Every HTTP error Parley sends is this envelope with exactly the keys
 * `defined, code, status, message, data`. Codes listed by the interface spec are `defined: true`
 * with the spec's fixed message; every other code follows the RPC library the interface was
 * generated with (`defined: false`, its default message) so unmodified clients decode them.
 */

export interface ErrorSpec {
  status: number;
  message: string;
  defined: boolean;
}

export const errorTable = {
  UNAUTHORIZED: { status: 401, message: 'Authentication is required to access this endpoint.', defined: true },
  FORBIDDEN: { status: 403, message: 'You do not have permission to perform this action.', defined: true },
  NOT_FOUND: { status: 404, message: 'The requested resource was not found.', defined: true },
  INTERNAL_SERVER_ERROR: { status: 500, message: 'Unexpected server error.', defined: true },
  BAD_REQUEST: { status: 400, message: 'Bad Request', defined: false },
  METHOD_NOT_SUPPORTED: { status: 405, message: 'Method Not Supported', defined: false },
  CONFLICT: { status: 409, message: 'Conflict', defined: false },
  // Something that was valid once and will not be again (a used or expired setup link).
  GONE: { status: 410, message: 'Gone', defined: false },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'Payload Too Large', defined: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Unsupported Media Type', defined: false },
  RANGE_NOT_SATISFIABLE: { status: 416, message: 'Range Not Satisfiable', defined: false },
  TOO_MANY_REQUESTS: { status: 429, message: 'Too Many Requests', defined: false },
  // The client left before its request was received (nginx's 499). Nobody reads this answer;
  // it exists so the request line says what happened, at info level, instead of a 500.
  CLIENT_CLOSED_REQUEST: { status: 499, message: 'Client Closed Request', defined: false },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service Unavailable', defined: false },
  // A server Parley calls on the caller's behalf (speech to text, text to speech) failed or refused.
  BAD_GATEWAY: { status: 502, message: 'Bad Gateway', defined: false },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof errorTable;

export interface ErrorEnvelope {
  defined: boolean;
  code: string;
  status: number;
  message: string;
  data: unknown;
}

/** Thrown by handlers and stores' callers; `onError` turns it into the envelope. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly data: unknown;
  readonly headers: Record<string, string>;
  /**
   * An answer the server means to give although its status is 5xx (a feature not set up, a queue
   * full): a state, not a failure, so not logged as one.
   */
  readonly expected: boolean;
  constructor(
    code: ErrorCode,
    opts: { message?: string; data?: unknown; headers?: Record<string, string>; cause?: unknown; expected?: boolean } = {},
  ) {
    super(opts.message ?? errorTable[code].message, { cause: opts.cause });
    this.code = code;
    this.data = opts.data ?? {};
    this.headers = opts.headers ?? {};
    this.expected = opts.expected ?? false;
  }

  get status(): number {
    return errorTable[this.code].status;
  }

  toEnvelope(): ErrorEnvelope {
    const spec = errorTable[this.code];
    // The spec's codes always carry the spec's fixed message; another that quotes a URL (an
    // upstream's address) shows it masked.
    const message = spec.defined ? spec.message : maskSecretsIn(this.message);
    return { defined: spec.defined, code: this.code, status: spec.status, message, data: this.data };
  }
}

/**
 * 503 for an operation whose feature the server has not set up (speech, semantic search): the
 * message names the settings that turn it on. A state of the configuration, not an error: the
 * request line (at info) is all the log says of it.
 */
export const notSetUp = (message: string) => new AppError('SERVICE_UNAVAILABLE', { message, expected: true });

export const unauthorized = () => new AppError('UNAUTHORIZED');
export const forbidden = () => new AppError('FORBIDDEN');
export const notFound = () => new AppError('NOT_FOUND');

export interface ValidationIssue {
  path: (string | number)[];
  message: string;
}

/**
 * A request refused by usage quotas (docs/usage.md, "Quotas"): 429 with the sentence that names
 * the limit and when it resets, `Retry-After` until then, and `{limit, resetAt}` in `data`.
 */
export function quotaExceeded(err: { message: string; limit: string; resetAt?: number }, now: number): AppError {
  const wait = err.resetAt === undefined ? undefined : Math.max(1, Math.ceil((err.resetAt - now) / 1000));
  return new AppError('TOO_MANY_REQUESTS', {
    message: err.message,
    data: { limit: err.limit, resetAt: err.resetAt === undefined ? null : new Date(err.resetAt).toISOString() },
    headers: wait === undefined ? {} : { 'retry-after': String(wait) },
  });
}

export const invalidInput = (issues: ValidationIssue[]) =>
  new AppError('BAD_REQUEST', { message: 'Input validation failed', data: { issues } });

export const tooManyRequests = (retryAfterSeconds: number) =>
  new AppError('TOO_MANY_REQUESTS', {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });

export function errorResponse(err: AppError, extraHeaders: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(err.toEnvelope()), {
    status: err.status,
    headers: { 'content-type': 'application/json', ...extraHeaders, ...err.headers },
  });
}

/**
 * The `/v1` door answers in OpenAI's error shape instead of the envelope (docs/openai-api.md,
 * "Errors"): `{error: {message, type, code, param}}` with the statuses OpenAI's API uses, so the
 * clients written for it (the `openai` SDKs, Vercel's AI SDK, editors) read them as they read
 * OpenAI's own. The same table for every `/v1` route: a code of the envelope's table maps to one
 * OpenAI type and code; errors of `/v1`'s own (an unknown model, a parameter refused) are made
 * with `openAiError` directly.
 */
export interface OpenAiErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

export class OpenAiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'OpenAiError';
  }

  toBody(): OpenAiErrorBody {
    return { error: { message: maskSecretsIn(this.message), type: this.type, code: this.code, param: this.param } };
  }
}

/** A parameter of the request refused (400 `invalid_request_error`), naming it. */
export const openAiInvalid = (message: string, param: string | null = null, code: string | null = null) => new OpenAiError(400, message, 'invalid_request_error', code, param);

/** An unknown, hidden or forbidden model: 404 `model_not_found`, as OpenAI answers both. */
export const openAiModelNotFound = (message: string) => new OpenAiError(404, message, 'invalid_request_error', 'model_not_found', 'model');

/** How each code of the envelope's table reads on `/v1`: OpenAI's type and code for the same status. */
const openAiShapes: Record<ErrorCode, { type: string; code: string | null; message?: string }> = {
  UNAUTHORIZED: {
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message: 'Incorrect API key provided. Use a Parley API key (Settings → API keys) as the Bearer token or the x-api-key header.',
  },
  FORBIDDEN: { type: 'invalid_request_error', code: null },
  NOT_FOUND: { type: 'invalid_request_error', code: null },
  INTERNAL_SERVER_ERROR: { type: 'server_error', code: null, message: 'The server had an error while processing your request.' },
  BAD_REQUEST: { type: 'invalid_request_error', code: null },
  METHOD_NOT_SUPPORTED: { type: 'invalid_request_error', code: null },
  CONFLICT: { type: 'invalid_request_error', code: null },
  GONE: { type: 'invalid_request_error', code: null },
  PAYLOAD_TOO_LARGE: { type: 'invalid_request_error', code: 'request_too_large', message: 'The request body is too large for this server.' },
  UNSUPPORTED_MEDIA_TYPE: { type: 'invalid_request_error', code: null },
  RANGE_NOT_SATISFIABLE: { type: 'invalid_request_error', code: null },
  TOO_MANY_REQUESTS: { type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached: too many requests at once or in a short time. Try again after the time Retry-After says.' },
  CLIENT_CLOSED_REQUEST: { type: 'invalid_request_error', code: null },
  SERVICE_UNAVAILABLE: { type: 'server_error', code: null },
  BAD_GATEWAY: { type: 'server_error', code: null },
};

/** An envelope error said in OpenAI's shape (its status, headers and, for Parley's own sentences, message). */
export function openAiErrorOf(err: AppError): OpenAiError {
  const shape = openAiShapes[err.code];
  const own = errorTable[err.code].defined || err.message === errorTable[err.code].message;
  const issues = (err.data as { issues?: ValidationIssue[] } | undefined)?.issues;
  const param = issues?.[0]?.path.join('.') || null;
  const message = shape.message && own ? shape.message : issues?.[0] ? `${issues[0].message}${param ? ` (${param})` : ''}` : err.message;
  return new OpenAiError(err.status, message, shape.type, shape.code, param, err.headers);
}

export function openAiErrorResponse(err: OpenAiError): Response {
  return new Response(JSON.stringify(err.toBody()), { status: err.status, headers: { 'content-type': 'application/json', ...err.headers } });
}
