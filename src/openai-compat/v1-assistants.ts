import type { AppDeps } from '../deps';
import type { Assistant, AssistantParameters, User } from '../db/schema';
import { canUseAssistant, findAssistantById, listAssistantsFor } from '../assistants/assistant.store';
import { openAiModelNotFound } from '../http/errors';
import type { ChatMessage, ChatRequest } from './chat-request';

/**
 * Assistants as `/v1` models (docs/openai-api.md, "Assistants"): `assistant:<id>` names one the
 * key's user may use. Catalogue ids are `<connection>/<model>` and a connection's name has no
 * colon, so the prefix cannot be taken for a catalogue id; a plain upstream id that begins with it
 * is not reachable by that spelling (its catalogue id still is).
 */
export const ASSISTANT_PREFIX = 'assistant:';

export const isAssistantModel = (model: string) => model.startsWith(ASSISTANT_PREFIX);
export const assistantModelId = (a: Pick<Assistant, 'id'>) => `${ASSISTANT_PREFIX}${a.id}`;

/** What a `/v1` call made with an assistant carries along: for the usage row and a kept conversation. */
export interface V1Assistant {
  id: string;
  name: string;
  instructions: string;
  /** Its model (a catalogue id); null: the server's default chat model. */
  model: string | null;
  /** Its sampling settings: what the caller leaves unset (docs/assistants.md, "Parameters"). */
  parameters: AssistantParameters;
}

const viewerOf = (user: User) => ({ id: user.id, subscriptionTier: user.subscriptionTier, isAdmin: user.isAdmin });

/** The assistants the user may use (their own and the shared ones for them), by name. */
export async function usableAssistants(deps: AppDeps, user: User): Promise<Assistant[]> {
  const rows = await deps.store.read((tx) => listAssistantsFor(tx, user.id));
  return rows.filter((a) => canUseAssistant(a, viewerOf(user)));
}

/**
 * The assistant `assistant:<id>` names, or the 404 a model the caller may not use gets: unknown,
 * another user's, or a shared one no longer for them (its tiers changed) all read the same.
 */
export async function assistantOfModel(deps: AppDeps, user: User, model: string): Promise<V1Assistant> {
  const id = model.slice(ASSISTANT_PREFIX.length);
  const a = id ? await deps.store.read((tx) => findAssistantById(tx, id)) : undefined;
  if (!a || !canUseAssistant(a, viewerOf(user)))
    throw openAiModelNotFound(`The assistant "${model}" does not exist or you may not use it (GET /v1/models lists yours).`);
  return { id: a.id, name: a.name, instructions: a.instructions, model: a.model, parameters: a.parameters };
}

/**
 * The request with the assistant's instructions put first, as the model's own system prompt: the
 * caller's system (or developer) messages follow them, so what an editor asks for (Continue's and
 * Zed's edit formats, their rules) comes last and wins where the two disagree. Joined into the
 * caller's first system message when there is one, since some chat templates take a single
 * system message at the start; the caller's messages are not changed in place. The assistant's
 * parameters fill in what the caller left unset.
 */
export function withAssistant<R extends Pick<ChatRequest, 'messages' | SamplingField>>(req: R, assistant: V1Assistant | undefined): R {
  const sampled = withSampling(req, assistant?.parameters);
  const instructions = assistant?.instructions.trim();
  if (!instructions) return sampled;
  const [first, ...rest] = sampled.messages;
  if (first && (first.role === 'system' || first.role === 'developer')) return { ...sampled, messages: [{ ...first, content: joined(instructions, first.content) }, ...rest] };
  return { ...sampled, messages: [{ role: 'system', content: instructions }, ...sampled.messages] };
}

type SamplingField = 'temperature' | 'top_p' | 'max_tokens' | 'max_completion_tokens';

/** The assistant's temperature, top_p and answer limit where the caller set none: the caller's own win. */
function withSampling<R extends Pick<ChatRequest, SamplingField>>(req: R, p: AssistantParameters | undefined): R {
  if (!p) return req;
  const unset = (v: number | null | undefined) => typeof v !== 'number';
  return {
    ...req,
    ...(p.temperature !== undefined && unset(req.temperature) ? { temperature: p.temperature } : {}),
    ...(p.topP !== undefined && unset(req.top_p) ? { top_p: p.topP } : {}),
    ...(p.maxOutputTokens !== undefined && unset(req.max_tokens) && unset(req.max_completion_tokens) ? { max_tokens: p.maxOutputTokens } : {}),
  };
}

function joined(instructions: string, content: ChatMessage['content']): ChatMessage['content'] {
  if (Array.isArray(content)) return [{ type: 'text', text: instructions }, ...content];
  return content ? `${instructions}\n\n${content}` : instructions;
}
