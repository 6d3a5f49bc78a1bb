import { t, type TSchema } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError } from '../http/errors';
import type { AppDeps } from '../deps';
import { KINDS } from './connection-options';
import { addConnection, ConnectionRefusal, connectionView, listConnections, removeConnection, updateConnection } from './connection.service';
import { testConnection } from './connection-health';
import { findConnection } from './connection.store';
import { DefaultModels } from '../chat/models.routes';
import { PURPOSES } from './resolver';
import { listModelSettings, setDefaultModels, setModelSettings } from './model-settings.service';

// Connections and the model catalogue, for admins (docs/connections.md): thin handlers over the
// rules `parley connection` shares (connection.service.ts).

const ADMIN_ONLY = "Admins only: any other caller is answered 403. Credentials are never returned (`hasCredential` says whether one is set).";

/** The shared rules refuse in words; the API answers those words with their status. */
async function refused<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof ConnectionRefusal)) throw err;
    throw new AppError(err.status === 404 ? 'NOT_FOUND' : err.status === 409 ? 'CONFLICT' : 'BAD_REQUEST', { message: err.message });
  }
}

const Kind = t.Union(KINDS.map((k) => t.Literal(k)));
/** An option's value, or null to remove it (admin/updateConnection merges options). */
const orRemove = <T extends TSchema>(schema: T) => t.Optional(t.Union([schema, t.Null()]));
const Options = t.Object(
  {
    model: orRemove(t.String({ maxLength: 200 })),
    researchModel: orRemove(t.String({ maxLength: 200 })),
    tools: orRemove(t.Union([t.Literal('auto'), t.Literal('on'), t.Literal('off')])),
    vision: orRemove(t.Union([t.Literal('auto'), t.Literal('on'), t.Literal('off')])),
    contextTokens: orRemove(t.Integer({ minimum: 0, maximum: 10_000_000 })),
    answerTokens: orRemove(t.Integer({ minimum: 0, maximum: 1_000_000 })),
    idleTimeoutS: orRemove(t.Integer({ minimum: 1, maximum: 3600 })),
    thinkingTokens: orRemove(t.Integer({ minimum: 0, maximum: 1_000_000 })),
    dimensions: orRemove(t.Integer({ minimum: 0, maximum: 100_000 })),
    batch: orRemove(t.Integer({ minimum: 1, maximum: 2048 })),
    timeoutS: orRemove(t.Integer({ minimum: 1, maximum: 3600 })),
    seconds: orRemove(t.Integer({ minimum: 1, maximum: 120 })),
    size: orRemove(t.String({ pattern: '^(auto|[1-9]\\d{1,4}x[1-9]\\d{1,4})$' })),
    voice: orRemove(t.String({ maxLength: 100 })),
    maxChars: orRemove(t.Integer({ minimum: 1, maximum: 1_000_000 })),
    maxBytes: orRemove(t.Integer({ minimum: 1, maximum: 1_000_000_000 })),
  },
  { description: "The kind's settings (docs/connections.md, \"Options\"); one a kind does not take is refused. `null` removes one (back to its default)." },
);
const Health = t.Object({
  reachable: t.Boolean(),
  latencyMs: t.Integer(),
  error: t.Union([t.String(), t.Null()], { description: 'Why it is not usable, in words (never the server\'s own text or the credential).' }),
  models: t.Union([t.Integer(), t.Null()], { description: 'How many models it lists, when it lists them.' }),
  checkedAt: t.String({ format: 'date-time' }),
});
const ConnectionSchema = t.Object({
  id: t.String(),
  name: t.String(),
  kind: Kind,
  api: t.String(),
  baseUrl: t.String(),
  hasCredential: t.Boolean(),
  options: t.Record(t.String(), t.Unknown()),
  enabled: t.Boolean(),
  source: t.Union([t.Literal('env'), t.Literal('admin'), t.Literal('discovered')], { description: '`env`: seeded from the environment settings, which it follows (only `enabled` is the admin\'s).' }),
  allowPrivate: t.Boolean(),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
  health: t.Union([Health, t.Null()], { description: 'Its last look (the catalogue\'s or a test\'s), null before any.' }),
});
const Name = t.String({ minLength: 1, maxLength: 40, description: 'Lowercase letters, digits and hyphens; the prefix of its models\' ids.' });
const Ref = t.String({ minLength: 1, maxLength: 100, description: 'The connection\'s id or name.' });
const Credential = t.String({ maxLength: 5000, description: 'An API key or token; sealed at rest, never returned.' });
const BaseUrl = t.String({ minLength: 1, maxLength: 2000 });

const view = (deps: AppDeps) => (row: Parameters<typeof connectionView>[0]) => connectionView(row, deps.connections);

const CapabilitiesInput = t.Object({
  vision: t.Optional(t.Union([t.Boolean(), t.Null()])),
  tools: t.Optional(t.Union([t.Boolean(), t.Null()])),
  thinking: t.Optional(t.Union([t.Boolean(), t.Null()])),
  contextTokens: t.Optional(t.Union([t.Integer({ minimum: 1 }), t.Null()])),
});
const ModelSettingSchema = t.Object({
  id: t.String({ description: '`<connection>/<model>`' }),
  connection: t.String(),
  model: t.String(),
  name: t.String(),
  hidden: t.Boolean(),
  position: t.Union([t.Integer(), t.Null()]),
  capabilities: t.Object({ vision: t.Boolean(), tools: t.Boolean(), thinking: t.Boolean(), contextTokens: t.Union([t.Integer(), t.Null()]) }, { description: 'What the model can do: the admin\'s word where given, else what is detected.' }),
  detected: t.Object({ vision: t.Boolean(), tools: t.Boolean(), thinking: t.Boolean(), contextTokens: t.Union([t.Integer(), t.Null()]) }, { description: 'What its connection tells, before the admin\'s word.' }),
  overrides: t.Object(
    { vision: t.Union([t.Boolean(), t.Null()]), tools: t.Union([t.Boolean(), t.Null()]), thinking: t.Union([t.Boolean(), t.Null()]), contextTokens: t.Union([t.Integer(), t.Null()]) },
    { description: 'The admin\'s word on each capability; null: as detected.' },
  ),
  tiers: t.Union([t.Array(t.String()), t.Null()], { description: 'Tiers that may use it; null: every tier.' }),
  available: t.Boolean(),
});

export const connectionOperations = [
  defineOperation({
    path: 'admin/listConnections',
    admin: true,
    summary: 'Every connection (AI servers, embeddings, images, speech, search), with its last health',
    description: ADMIN_ONLY,
    input: t.Object({}),
    output: t.Object({ connections: t.Array(ConnectionSchema) }),
    errors: [403],
    handler: async ({ deps }) => ({ connections: (await listConnections(deps)).map(view(deps)) }),
  }),
  defineOperation({
    path: 'admin/addConnection',
    admin: true,
    summary: 'Add a connection',
    description: `${ADMIN_ONLY} \`api\` defaults to the kind's first (chat: openai-chat). A name taken: 409. The base URL, credential or options refused: 400 saying why (a credential with a line break, a URL with a password in it).`,
    input: t.Object({
      name: Name,
      kind: Kind,
      api: t.Optional(t.String({ maxLength: 40 })),
      baseUrl: BaseUrl,
      credential: t.Optional(Credential),
      options: t.Optional(Options),
      enabled: t.Optional(t.Boolean()),
      allowPrivate: t.Optional(t.Boolean({ description: 'May its URL be on this machine or the LAN (default true: local model servers are the point).' })),
    }),
    output: t.Object({ connection: ConnectionSchema }),
    errors: [403, 409],
    handler: async ({ input, deps }) => ({ connection: view(deps)(await refused(() => addConnection(deps, input))) }),
  }),
  defineOperation({
    path: 'admin/updateConnection',
    admin: true,
    summary: 'Change a connection (its version moves: every instance rebuilds its adapter)',
    description: `${ADMIN_ONLY} Fields left out stay; \`credential: null\` removes it; \`options\` are merged into the current ones. A connection from the environment settings takes \`enabled\` only (400 otherwise). Unknown: 404.`,
    input: t.Object({
      id: Ref,
      name: t.Optional(Name),
      api: t.Optional(t.String({ maxLength: 40 })),
      baseUrl: t.Optional(BaseUrl),
      credential: t.Optional(t.Union([Credential, t.Null()])),
      options: t.Optional(Options),
      enabled: t.Optional(t.Boolean()),
      allowPrivate: t.Optional(t.Boolean()),
    }),
    output: t.Object({ connection: ConnectionSchema }),
    errors: [403, 404, 409],
    handler: async ({ input, deps }) => {
      const { id, ...change } = input;
      return { connection: view(deps)(await refused(() => updateConnection(deps, id, change))) };
    },
  }),
  defineOperation({
    path: 'admin/removeConnection',
    admin: true,
    summary: 'Remove a connection and its model settings',
    description: `${ADMIN_ONLY} A turn running on it finishes; later turns naming its models are refused (400). The environment's connections cannot be removed (400: unset the settings, or disable it). Unknown: 404.`,
    input: t.Object({ id: Ref }),
    output: t.Object({ removed: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      await refused(() => removeConnection(deps, input.id));
      return { removed: true };
    },
  }),
  defineOperation({
    path: 'admin/testConnection',
    admin: true,
    summary: 'Reach a connection now: reachable, latency, the models it lists, or a clear error',
    description: `${ADMIN_ONLY} Waits at most 4 s. The answer is 200 whatever the connection says; \`error\` names the problem (unreachable, the credential refused, not an AI server's address). Unknown: 404.`,
    input: t.Object({ id: Ref }),
    output: t.Object({ reachable: t.Boolean(), latencyMs: t.Integer(), error: t.Union([t.String(), t.Null()]), models: t.Array(t.String({ description: 'At most 50.' })) }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      await deps.connections.ready();
      const row = await deps.store.read((tx) => findConnection(tx, input.id));
      if (!row) throw new AppError('NOT_FOUND', { message: `No connection ${input.id}.` });
      const h = await testConnection(deps.connections, row);
      return { reachable: h.reachable, latencyMs: h.latencyMs, error: h.error ?? null, models: h.models ?? [] };
    },
  }),
  defineOperation({
    path: 'admin/listModelSettings',
    admin: true,
    summary: 'The whole catalogue as admins see it: hidden models too, with their settings and the defaults',
    description: ADMIN_ONLY,
    input: t.Object({}),
    output: t.Object({ models: t.Array(ModelSettingSchema), defaults: DefaultModels }),
    errors: [403],
    handler: ({ deps }) => listModelSettings(deps),
  }),
  defineOperation({
    path: 'admin/setModelSettings',
    admin: true,
    summary: "Hide, rename, order a model, set what it can do and which tiers may use it",
    description: `${ADMIN_ONLY} \`id\` is the catalogue id (\`<connection>/<model>\`); fields left out stay, \`null\` goes back to what is detected (capabilities) or to every tier (\`tiers\`). A model of no connection: 404.`,
    input: t.Object({
      id: t.String({ minLength: 3, maxLength: 300 }),
      name: t.Optional(t.Union([t.String({ maxLength: 200 }), t.Null()])),
      hidden: t.Optional(t.Boolean()),
      position: t.Optional(t.Union([t.Integer({ minimum: 0, maximum: 1_000_000 }), t.Null()])),
      capabilities: t.Optional(CapabilitiesInput),
      tiers: t.Optional(t.Union([t.Array(t.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 }), t.Null()])),
    }),
    output: t.Object({ model: ModelSettingSchema }),
    errors: [403, 404],
    handler: async ({ input, deps }) => ({ model: await refused(() => setModelSettings(deps, input)) }),
  }),
  defineOperation({
    path: 'admin/setDefaultModels',
    admin: true,
    summary: 'The default models: chat, research, the group assistant, titles',
    description: `${ADMIN_ONLY} Each a catalogue id; one left out stays, \`null\` goes back to the first connection's own. A model no connection offers: 400.`,
    input: t.Object(Object.fromEntries(PURPOSES.map((p) => [p, t.Optional(t.Union([t.String({ minLength: 1, maxLength: 300 }), t.Null()]))]))),
    output: t.Object({ defaults: DefaultModels }),
    errors: [403],
    handler: async ({ input, deps }) => ({ defaults: await refused(() => setDefaultModels(deps, input as Record<string, string | null | undefined>)) }),
  }),
];
