import type { Config } from '../config';
import { bodyLimitOf, type AnyOperation } from './operation';
import { errorTable } from './errors';
import { compileInput, outputSchema } from './body';
import { uploadSchema } from './upload';
import { JSON_MAX_DEPTH, JSON_MAX_KEY_BYTES, JSON_MAX_VALUES } from './check-json-shape';

const BODY_SHAPE = `nesting at most ${JSON_MAX_DEPTH} deep, at most ${JSON_MAX_VALUES} values, keys at most ${JSON_MAX_KEY_BYTES} bytes`;

const ENVELOPE = {
  type: 'object',
  required: ['defined', 'code', 'status', 'message', 'data'],
  additionalProperties: false,
  properties: {
    defined: { type: 'boolean' },
    code: { type: 'string' },
    status: { type: 'integer' },
    message: { type: 'string' },
    data: {},
  },
};

const statusText = (status: number) =>
  Object.entries(errorTable).find(([, s]) => s.status === status)?.[0] ?? 'Error';

/**
 * Every error status an operation can answer: what the pipeline in src/http/register.ts answers
 * for any row of its kind, plus the row's own `errors`. The OpenAPI document and /api/docs list
 * these, so a change to the pipeline is a change here.
 */
export function errorStatusesOf(op: AnyOperation): number[] {
  const statuses = new Set<number>([
    400, // malformed UTF-8 or JSON, failed validation (`issues`)
    413, // a body over the operation's limit (bodyLimitOf), or JSON past the shape bounds
    415, // a body that is not declared JSON (multipart/form-data, for uploads)
    500,
    ...(op.errors ?? []),
  ]);
  if (op.upload) statuses.add(403); // a browser's post from another site, with the session cookie
  if (!op.public) statuses.add(401); // before anything else
  if (op.rateLimit || op.kind === 'sse') statuses.add(429); // the row's token bucket; the per-user stream cap
  if (op.kind === 'sse') statuses.add(503); // a stream opened while the server stops
  return [...statuses].sort((a, b) => a - b);
}

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } } };

/**
 * A path item lists exactly the methods its path takes, so another method's 405 is no operation's
 * answer: it is this one response, referenced from every path item by the `x-method-not-allowed`
 * extension. Its `Allow` header names the methods the path item lists.
 */
const METHOD_NOT_ALLOWED = {
  description: 'METHOD_NOT_SUPPORTED: the path does not take this method (operations take POST only; pages GET and HEAD)',
  headers: { Allow: { description: 'The methods the path takes, e.g. `POST`', schema: { type: 'string' } } },
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
};
const methodNotAllowed = { 'x-method-not-allowed': { $ref: '#/components/responses/MethodNotAllowed' } };

/** Strip TypeBox's symbol keys and `[Kind]` markers by a JSON round trip: what is left is JSON Schema. */
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema));
/** An answer's schema: exactly what is sent (no input-only string twins), as plain JSON Schema. */
const sent = (op: AnyOperation) => plain(outputSchema(op.output));

/**
 * OpenAPI 3.1 for every operation, built from the same table that mounts the routes, and for the
 * pages (`pages`: path items of GET routes that are not operation rows, e.g. the sign-in flow's).
 * With `config`, each request body states the largest size this server accepts for it (some
 * limits follow settings).
 */
export function buildOpenApi(ops: readonly AnyOperation[], pages: Record<string, object> = {}, version = '1.1.2', config?: Config) {
  const paths: Record<string, object> = {};
  for (const op of ops) {
    const responses: Record<string, unknown> = {
      200:
        op.kind === 'sse'
          ? {
              description: 'A server-sent-event stream. Each frame is `event: message` with an `id` and JSON `data` of this schema.',
              content: { 'text/event-stream': { schema: sent(op) } },
            }
          : op.kind === 'binary'
            ? { description: 'The bytes, streamed as they are produced', content: Object.fromEntries((op.mediaTypes ?? ['application/octet-stream']).map((m) => [m, { schema: sent(op) }])) }
            : { description: 'Success', content: { 'application/json': { schema: sent(op) } } },
    };
    for (const s of errorStatusesOf(op))
      responses[s] = {
        description: statusText(s),
        ...(s === 429 || s === 503 ? { headers: retryAfter } : {}),
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
      };
    paths[`/api/${op.path}`] = {
      post: {
        operationId: op.path.replace('/', '.'),
        tags: [op.path.split('/')[0]],
        summary: op.summary,
        ...(op.description ? { description: op.description } : {}),
        ...(op.deprecated ? { deprecated: true } : {}),
        security: op.public ? [] : [{ session: [] }, { bearer: [] }, { apiKey: [] }],
        requestBody: op.upload
          ? {
              required: true,
              ...(config ? { description: `multipart/form-data, at most ${bodyLimitOf(op, config)} bytes; larger: 413.`, 'x-max-body-bytes': bodyLimitOf(op, config) } : {}),
              content: { 'multipart/form-data': { schema: uploadSchema(plain(compileInput(op.input).schema)) } },
            }
          : {
              required: false,
              ...(config ? { description: `JSON, at most ${bodyLimitOf(op, config)} bytes (${BODY_SHAPE}); larger: 413.`, 'x-max-body-bytes': bodyLimitOf(op, config) } : {}),
              content: { 'application/json': { schema: plain(compileInput(op.input).schema) } },
            },
        responses,
      },
    };
  }
  paths['/api/health'] = {
    get: { summary: 'Liveness for supervisors (no credential needed)', security: [], responses: { 200: { description: 'OK' } } },
  };
  Object.assign(paths, pages);
  for (const path in paths) paths[path] = { ...methodNotAllowed, ...paths[path] };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Parley',
      version,
      description:
        'Every operation is `POST /api/<category>/<name>` with a JSON body. Errors use one envelope. Another method on a known path answers 405 with `Allow` (`x-method-not-allowed` on each path).',
    },
    paths,
    components: {
      schemas: { ErrorEnvelope: ENVELOPE },
      responses: { MethodNotAllowed: METHOD_NOT_ALLOWED },
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'parley_session' },
        bearer: { type: 'http', scheme: 'bearer' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
    },
  };
}
