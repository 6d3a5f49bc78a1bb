import type { AppDeps } from '../deps';
import type { User } from '../db/schema';
import { NO_PROVIDER_MESSAGE } from '../ai/ai.types';
import { AppError, openAiModelNotFound } from '../http/errors';
import { optionsOf } from '../connections/connection-options';
import type { ChatRequest } from './chat-request';
import type { OpenStream, V1Target } from './upstream-call';
import { openOpenAiChat } from './upstream-openai-chat';
import { openAnthropic } from './upstream-anthropic';
import { openResponses } from './upstream-responses';
import { assistantOfModel, isAssistantModel } from './v1-assistants';

/**
 * A `/v1` request's model, resolved as Parley's own turns resolve theirs (deps.connections, the
 * catalogue's ids and the caller's tier), with the connection's credential opened once per row
 * version and kept (opening unseals it: not on the path of every request). An unknown, hidden or
 * forbidden model is OpenAI's 404 `model_not_found`, with the resolver's sentence. An
 * assistant (`assistant:<id>`, v1-assistants.ts) answers with its own model, else the default.
 */
export function createV1Targets(deps: AppDeps) {
  const keys = new Map<string, { version: number; key: Promise<string | undefined> }>();
  return async function resolve(model: string, user: User): Promise<V1Target> {
    const assistant = isAssistantModel(model) ? await assistantOfModel(deps, user, model) : undefined;
    let found;
    try {
      found = await deps.connections.chat(assistant ? (assistant.model ?? undefined) : model, 'chat', { subscriptionTier: user.subscriptionTier });
    } catch (err) {
      if (err instanceof AppError) throw openAiModelNotFound(assistant ? `The assistant "${assistant.name}" cannot answer you: ${err.message}` : err.message);
      throw err;
    }
    if (!found) throw openAiModelNotFound(NO_PROVIDER_MESSAGE);
    const row = found.connection;
    let kept = keys.get(row.id);
    if (kept?.version !== row.version) {
      const key = deps.connections.open(row).then((c) => c.apiKey);
      kept = { version: row.version, key };
      keys.set(row.id, kept);
      key.catch(() => keys.delete(row.id));
    }
    const o = optionsOf(row);
    return {
      id: found.id,
      model: found.model,
      connection: row,
      apiKey: await kept.key,
      idleTimeoutMs: (o.idleTimeoutS ?? deps.config.aiIdleTimeoutS) * 1000,
      answerTokens: o.answerTokens || undefined,
      assistant,
    };
  };
}

export type ResolveTarget = ReturnType<typeof createV1Targets>;

/** The connection's answer as Chat Completions chunks, by its API. */
export const openStream: OpenStream = (target: V1Target, req: ChatRequest, signal: AbortSignal) => {
  switch (target.connection.api) {
    case 'anthropic':
      return openAnthropic(target, req, signal);
    case 'openai-responses':
      return openResponses(target, req, signal);
    default:
      return openOpenAiChat(target, req, signal);
  }
};
