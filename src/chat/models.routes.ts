import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { listModels } from '../ai/list-models';

export const modelOperations = [
  defineOperation({
    path: 'chat/listModels',
    summary: 'The models a chat turn may name',
    description:
      "What the AI provider's `GET /v1/models` lists (minus embedding, speech and image models), the configured chat model (`PARLEY_AI_MODEL`) first and as `default`. Cached for a minute; a provider that does not answer within 3 s, or has no such endpoint, gives `[default]`.",
    input: t.Object({}),
    output: t.Object({ models: t.Array(t.Object({ id: t.String() })), default: t.String() }),
    handler: ({ deps }) => listModels(deps.config, deps.now()),
  }),
];
