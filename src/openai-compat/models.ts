import type { AppDeps } from '../deps';
import type { ConnectionRow, User } from '../db/schema';
import { catalogueId } from '../connections/catalogue';
import { optionsOf } from '../connections/connection-options';
import { openAiModelNotFound } from '../http/errors';
import type { V1Context } from './v1-route';

/**
 * `GET /v1/models` and `GET /v1/models/{model}`: the chat models the key's user may use (the
 * catalogue, as `chat/listModels` lists them for them: hidden ones and other tiers' left out),
 * then the embeddings connection's model, in OpenAI's `model` objects.
 */
interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
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

async function modelsOf(deps: AppDeps, user: User): Promise<ModelObject[]> {
  const [{ models }, rows, embeddings] = await Promise.all([deps.connections.catalogue({ subscriptionTier: user.subscriptionTier }), deps.connections.rows(), embeddingsModel(deps)]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return [...models.map((m) => modelObject(m.id, byId.get(m.connectionId))), ...(embeddings ? [modelObject(embeddings.id, embeddings.row)] : [])];
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
