import type { AnyOperation } from './operation';
import { errorTable } from './errors';
import { compileInput } from './body';

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

/** Strip TypeBox's symbol keys and `[Kind]` markers by a JSON round trip: what is left is JSON Schema. */
const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema));

/** OpenAPI 3.1 for every operation, built from the same table that mounts the routes. */
export function buildOpenApi(ops: readonly AnyOperation[], version = '1.1.2') {
  const paths: Record<string, unknown> = {};
  for (const op of ops) {
    const statuses = [...new Set([400, ...(op.public ? [] : [401]), ...(op.errors ?? []), 500])].sort();
    const responses: Record<string, unknown> = {
      200:
        op.kind === 'sse'
          ? {
              description: 'A server-sent-event stream. Each frame is `event: message` with an `id` and JSON `data` of this schema.',
              content: { 'text/event-stream': { schema: plain(op.output) } },
            }
          : { description: 'Success', content: { 'application/json': { schema: plain(op.output) } } },
    };
    for (const s of statuses)
      responses[s] = {
        description: statusText(s),
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
        requestBody: {
          required: false,
          content: { 'application/json': { schema: plain(compileInput(op.input).schema) } },
        },
        responses,
      },
    };
  }
  paths['/api/health'] = {
    get: { summary: 'Liveness for supervisors (no credential needed)', security: [], responses: { 200: { description: 'OK' } } },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Parley',
      version,
      description: 'Every operation is `POST /api/<category>/<name>` with a JSON body. Errors use one envelope.',
    },
    paths,
    components: {
      schemas: { ErrorEnvelope: ENVELOPE },
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'parley_session' },
        bearer: { type: 'http', scheme: 'bearer' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
    },
  };
}
