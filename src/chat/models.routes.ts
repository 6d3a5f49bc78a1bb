import { t } from 'elysia';
import { defineOperation } from '../http/operation';

const Capabilities = t.Object({
  vision: t.Boolean(),
  tools: t.Boolean(),
  thinking: t.Boolean(),
  contextTokens: t.Union([t.Integer(), t.Null()], { description: 'The context window in tokens, when known.' }),
});

export const ModelEntry = t.Object({
  id: t.String({ description: '`<connection>/<upstream model id>`: what `chat/stream` takes as `model`.' }),
  name: t.String({ description: 'The name to show (the admin may rename a model).' }),
  connection: t.String({ description: 'The connection that serves it.' }),
  capabilities: Capabilities,
  available: t.Boolean({ description: 'False when its connection did not answer its last look: listed, but a turn may fail.' }),
});

export const DefaultModels = t.Object({ chat: t.String(), research: t.String(), group: t.String(), title: t.String() });

export const modelOperations = [
  defineOperation({
    path: 'chat/listModels',
    summary: 'The models a chat turn may name',
    description:
      "Every enabled chat connection's models (docs/connections.md): each connection's default model first, then what its `GET /models` lists (minus embedding, speech and image models), in the admin's order, without the models the admin hid or kept from the caller's tier. `default` is the chat default's id; `defaults` the defaults per use. Each connection's list is cached for a minute; the first list of a connection is waited for 1 s at most, and one that does not answer is listed with its default model alone, `available: false`, and asked again in the background.",
    input: t.Object({}),
    output: t.Object({ models: t.Array(ModelEntry), default: t.String(), defaults: DefaultModels }),
    handler: async ({ deps, user }) => {
      const { models, defaults } = await deps.connections.catalogue({ subscriptionTier: user.subscriptionTier });
      return {
        models: models.map((m) => ({ id: m.id, name: m.name, connection: m.connection, capabilities: m.capabilities, available: m.available })),
        default: defaults.chat,
        defaults,
      };
    },
  }),
];
