import type { AppDeps } from '../deps';
import type { Assistant, ConnectionRow, User } from '../db/schema';
import { catalogueId } from '../connections/catalogue';
import { optionsOf } from '../connections/connection-options';
import { AppError, openAiModelNotFound } from '../http/errors';
import type { V1Context } from './v1-route';
import { assistantModelId, usableAssistants } from './v1-assistants';

/**
 * `GET /v1/models` and `GET /v1/models/{model}`: the chat models the key's user may use (the
 * catalogue, as `chat/listModels` lists them for them: hidden ones and other tiers' left out),
 * the assistants they may use whose model their tier may use too (`assistant:<id>`, owned by
 * `assistant`, with their `name` and `description`), then the embeddings connection's model, in
 * OpenAI's `model` objects.
 */
interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  name?: string;
  description?: string;
}

const modelObject = (id: string, row: Pick<ConnectionRow, 'name' | 'createdAt'> | undefined): ModelObject => ({
  id,
  object: 'model',
  created: Math.floor((row?.createdAt ?? 0) / 1000),
  owned_by: row?.name ?? 'parley',
});

/** The embeddings connection in use (the first enabled one) and its model's catalogue id. */
export async function embeddingsModel(deps: AppDeps): Promise<{ row: ConnectionRow; id: string; model: string } | undefined> {
  const row = (await deps.connections.rows()).find((r) => r.enabled && r.kind === 'embeddings');
  if (!row) return undefined;
  const model = optionsOf(row).model ?? deps.config.embeddingsModel;
  return { row, id: catalogueId(row, model), model };
}

/** The assistants the user may use, left out when their model is not for the user's tier (a call would be refused). */
async function assistantModels(deps: AppDeps, user: User): Promise<ModelObject[]> {
  const asker = { subscriptionTier: user.subscriptionTier };
  // Refused (a model gone, or not for this tier): an AppError; anything else is a fault to report.
  const answers = (a: Assistant) =>
    deps.connections.chat(a.model ?? undefined, 'chat', asker).then(
      (found) => !!found,
      (err) => {
        if (err instanceof AppError) return false;
        throw err;
      },
    );
  const usable = await usableAssistants(deps, user);
  const ok = await Promise.all(usable.map(answers));
  return usable
    .filter((_, i) => ok[i])
    .map((a) => ({ id: assistantModelId(a), object: 'model' as const, created: Math.floor(a.createdAt / 1000), owned_by: 'assistant', name: a.name, description: a.description }));
}

async function modelsOf(deps: AppDeps, user: User): Promise<ModelObject[]> {
  const [{ models }, rows, assistants, embeddings] = await Promise.all([
    deps.connections.catalogue({ subscriptionTier: user.subscriptionTier }),
    deps.connections.rows(),
    assistantModels(deps, user),
    embeddingsModel(deps),
  ]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return [...models.map((m) => modelObject(m.id, byId.get(m.connectionId))), ...assistants, ...(embeddings ? [modelObject(embeddings.id, embeddings.row)] : [])];
}

export async function listModels({ deps, user }: V1Context): Promise<object> {
  return { object: 'list', data: await modelsOf(deps, user) };
}

export async function retrieveModel({ deps, user, params }: V1Context): Promise<object> {
  const id = decodeURIComponent(params['*'] ?? '');
  const found = (await modelsOf(deps, user)).find((m) => m.id === id);
  if (!found) throw openAiModelNotFound(`The model "${id}" does not exist or you do not have access to it (GET /v1/models lists yours).`);
  return found;
}
