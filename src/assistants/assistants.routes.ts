import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, forbidden, invalidInput, notFound } from '../http/errors';
import { checkCap } from '../http/user-caps';
import type { AppDeps } from '../deps';
import type { Assistant, AssistantParameters, User } from '../db/schema';
import { iso } from '../ids';
import {
  canEditAssistant,
  canUseAssistant,
  countOwnAssistants,
  deleteAssistant,
  findAssistantById,
  insertAssistant,
  listAssistantsFor,
  updateAssistant,
  type AssistantFields,
  type Viewer,
} from './assistant.store';
import { checkAssistantResources, KNOWLEDGE_FILES_MAX, liveResources, MCP_SERVERS_MAX } from './assistant-resources';

// Assistants (docs/assistants.md): thin handlers over assistant.store.ts.

const Name = t.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Description = t.String({ maxLength: 500 });
const Instructions = t.String({ maxLength: 20_000 });
const Model = t.Union([t.String({ minLength: 1, maxLength: 200 }), t.Null()], { description: 'A catalogue id (chat/listModels); null: the server\'s default model.' });
const Tools = t.Union([t.Array(t.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 }), t.Null()], {
  description: 'Tool source ids (`memory`, `files`, `web_search`, …: admin/getToolSettings) and tool names it may use; null: whatever the admin allows; []: none.',
});
const KnowledgeFileIds = t.Array(t.String({ minLength: 1, maxLength: 100 }), {
  maxItems: KNOWLEDGE_FILES_MAX,
  description: "Documents it always searches (read_file, search_files), even for a user who has none: the owner's own (files/listFiles); a shared assistant's, the admin's. Its users read them through it only.",
});
const McpServerIds = t.Union([t.Array(t.String({ minLength: 1, maxLength: 100 }), { maxItems: MCP_SERVERS_MAX }), t.Null()], {
  description: "The MCP servers whose tools it gets (mcp/listServers: the admin's, and the owner's own for a user's assistant); null: whatever its user has; []: none.",
});
const Starters = t.Array(t.String({ minLength: 1, maxLength: 500 }), { maxItems: 4, description: 'Prompts the web app offers on an empty chat with it.' });
// Ranges every provider takes (Anthropic's temperature tops at 1: src/ai/anthropic-messages.ts clamps it).
const Parameters = t.Object(
  {
    temperature: t.Optional(t.Union([t.Number({ minimum: 0, maximum: 2 }), t.Null()])),
    topP: t.Optional(t.Union([t.Number({ minimum: 0, maximum: 1 }), t.Null()])),
    maxOutputTokens: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 1_000_000 }), t.Null()])),
  },
  { description: 'Sampling settings for its turns: temperature 0–2, topP 0–1, maxOutputTokens 1–1,000,000; absent or null: the provider\'s default. Given on update, it replaces them all.' },
);
/** The settings as stored: absent for "the provider's default". */
const parametersOf = (p: { temperature?: number | null; topP?: number | null; maxOutputTokens?: number | null }): AssistantParameters => ({
  ...(p.temperature != null ? { temperature: p.temperature } : {}),
  ...(p.topP != null ? { topP: p.topP } : {}),
  ...(p.maxOutputTokens != null ? { maxOutputTokens: p.maxOutputTokens } : {}),
});
const Visibility = t.Union([t.Literal('everyone'), t.Literal('tiers')], { description: 'A shared assistant: for every user, or for the users of `tiers`.' });
const Tiers = t.Array(t.String({ minLength: 1, maxLength: 50 }), { maxItems: 50 });

export const AssistantSchema = t.Object({
  id: t.String(),
  name: t.String(),
  description: t.String(),
  instructions: t.String(),
  model: t.Union([t.String(), t.Null()]),
  tools: t.Union([t.Array(t.String()), t.Null()]),
  starters: t.Array(t.String()),
  knowledgeFileIds: t.Array(t.String(), { description: 'Its knowledge files that are still there.' }),
  mcpServerIds: t.Union([t.Array(t.String()), t.Null()], { description: 'Its MCP servers that are still there; null: whatever its user has.' }),
  parameters: t.Object(
    { temperature: t.Union([t.Number(), t.Null()]), topP: t.Union([t.Number(), t.Null()]), maxOutputTokens: t.Union([t.Integer(), t.Null()]) },
    { description: 'Sampling settings sent with each of its turns; null: the provider\'s default.' },
  ),
  avatarUrl: t.Union([t.String(), t.Null()], { description: 'Where its avatar is served (GET, with a credential; changes with the image); null: none.' }),
  shared: t.Boolean({ description: 'Shared by an admin (true), or the caller\'s own.' }),
  visibility: t.Union([t.Literal('private'), t.Literal('everyone'), t.Literal('tiers')]),
  tiers: t.Array(t.String()),
  canEdit: t.Boolean({ description: 'The caller may change and delete it: their own; a shared one, admins.' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
});

const viewerOf = (user: Viewer) => ({ id: user.id, subscriptionTier: user.subscriptionTier, isAdmin: user.isAdmin });

export const assistantView = (a: Assistant, user: Viewer) => ({
  id: a.id,
  name: a.name,
  description: a.description,
  instructions: a.instructions,
  model: a.model,
  tools: a.tools,
  starters: a.starters,
  parameters: { temperature: a.parameters.temperature ?? null, topP: a.parameters.topP ?? null, maxOutputTokens: a.parameters.maxOutputTokens ?? null },
  avatarUrl: a.avatarVersion ? `/api/assistants/${encodeURIComponent(a.id)}/avatar?v=${a.avatarVersion}` : null,
  shared: a.ownerId === null,
  visibility: a.visibility,
  tiers: a.tiers,
  canEdit: canEditAssistant(a, viewerOf(user)),
  createdAt: iso(a.createdAt),
  updatedAt: iso(a.updatedAt),
});

/** The views, with their knowledge files and MCP servers as they are now (files and servers removed since left out). */
async function viewsOf(deps: AppDeps, list: Assistant[], user: User) {
  const live = await deps.store.read((tx) => liveResources(tx, list));
  return list.map((a) => ({ ...assistantView(a, user), ...live.get(a.id)! }));
}
export const viewOf = async (deps: AppDeps, a: Assistant, user: User) => (await viewsOf(deps, [a], user))[0]!;

/** An assistant the caller may use: unknown, or not for them, 404. */
export async function usableAssistant(deps: AppDeps, user: User, id: string): Promise<Assistant | undefined> {
  const a = await deps.store.read((tx) => findAssistantById(tx, id));
  return a && canUseAssistant(a, viewerOf(user)) ? a : undefined;
}

/** One the caller may change: one they cannot see 404, one they see but may not change 403. */
export async function editableAssistant(deps: AppDeps, user: User, id: string): Promise<Assistant> {
  const a = await usableAssistant(deps, user, id);
  if (!a) throw notFound();
  if (!canEditAssistant(a, viewerOf(user))) throw forbidden();
  return a;
}

/**
 * A model the catalogue offers to whoever may use the assistant, else a 400 naming the field: the
 * caller's tier for their own; every tier for one shared with everyone; each of its tiers for one
 * shared with some. (The tier is checked again at each turn: models' tiers change.)
 */
export async function checkModel(deps: Pick<AppDeps, 'connections'>, model: string | null | undefined, forTiers: (string | undefined)[]): Promise<void> {
  if (!model) return;
  try {
    for (const tier of forTiers) await deps.connections.chat(model, 'chat', tier === undefined ? undefined : { subscriptionTier: tier });
  } catch (err) {
    if (err instanceof AppError) throw invalidInput([{ path: ['model'], message: err.message }]);
    throw err;
  }
}

/** The tiers an assistant's model must be open to (undefined: every tier). */
export const tiersFor = (user: Pick<User, 'subscriptionTier'>, s: { visibility: string; tiers: string[] }): (string | undefined)[] =>
  s.visibility === 'private' ? [user.subscriptionTier] : s.visibility === 'tiers' ? s.tiers : [undefined];

const unique = (ids: string[]) => [...new Set(ids)];

export const sharing = (shared: boolean, visibility: 'everyone' | 'tiers' | undefined, tiers: string[] | undefined) =>
  shared ? { visibility: visibility ?? 'everyone', tiers: visibility === 'tiers' ? (tiers ?? []) : [] } : { visibility: 'private' as const, tiers: [] };

/** The fields create and update both take (all but the name optional in both). */
const optionalFields = {
  description: t.Optional(Description),
  instructions: t.Optional(Instructions),
  model: t.Optional(Model),
  tools: t.Optional(Tools),
  starters: t.Optional(Starters),
  knowledgeFileIds: t.Optional(KnowledgeFileIds),
  mcpServerIds: t.Optional(McpServerIds),
  parameters: t.Optional(Parameters),
  visibility: t.Optional(Visibility),
  tiers: t.Optional(Tiers),
};

export const CreateInput = t.Object({ name: Name, ...optionalFields, shared: t.Optional(t.Boolean()) });

export const UpdateInput = t.Object({ assistantId: t.String({ minLength: 1, maxLength: 100 }), name: t.Optional(Name), ...optionalFields });

/** A new assistant's fields from `assistants/create`'s input, with whom it is for. */
export const fieldsOf = (input: typeof CreateInput.static, who: ReturnType<typeof sharing>): AssistantFields => ({
  ...who,
  name: input.name.trim(),
  description: input.description ?? '',
  instructions: input.instructions ?? '',
  model: input.model ?? null,
  tools: input.tools ?? null,
  starters: input.starters ?? [],
  knowledgeFileIds: unique(input.knowledgeFileIds ?? []),
  mcpServerIds: input.mcpServerIds ? unique(input.mcpServerIds) : null,
  parameters: parametersOf(input.parameters ?? {}),
});

/**
 * The change `assistants/update`'s input makes to `a`, and the tiers its model must then be open
 * to (none when neither the model nor who may use it changes).
 */
export function changeOf(a: Assistant, owner: Pick<User, 'subscriptionTier'>, input: Omit<typeof UpdateInput.static, 'assistantId'>): { change: Partial<AssistantFields>; checkTiers?: (string | undefined)[] } {
  const { visibility, tiers, parameters, ...rest } = input;
  const change: Partial<AssistantFields> = { ...rest, ...(rest.name ? { name: rest.name.trim() } : {}), ...(parameters ? { parameters: parametersOf(parameters) } : {}) };
  if (change.knowledgeFileIds) change.knowledgeFileIds = unique(change.knowledgeFileIds);
  if (change.mcpServerIds) change.mcpServerIds = unique(change.mcpServerIds);
  if (a.ownerId === null && (visibility || tiers)) Object.assign(change, sharing(true, visibility ?? (a.visibility as 'everyone' | 'tiers'), tiers ?? a.tiers));
  const checkTiers = input.model !== undefined || change.visibility ? tiersFor(owner, { visibility: change.visibility ?? a.visibility, tiers: change.tiers ?? a.tiers }) : undefined;
  return { change, checkTiers };
}

export const assistantOperations = [
  defineOperation({
    path: 'assistants/list',
    summary: 'The assistants the caller may use',
    description: "The caller's own and those admins shared with everyone or with the caller's tier (admins: every shared one), by name. `max`: how many of their own one user may keep (PARLEY_ASSISTANTS_MAX_PER_USER).",
    input: t.Object({}),
    output: t.Object({ assistants: t.Array(AssistantSchema), max: t.Integer() }),
    handler: async ({ user, deps }) => {
      const rows = await deps.store.read((tx) => listAssistantsFor(tx, user.id));
      const usable = rows.filter((a) => canUseAssistant(a, viewerOf(user)));
      return { assistants: await viewsOf(deps, usable, user), max: deps.config.assistantsMaxPerUser };
    },
  }),
  defineOperation({
    path: 'assistants/get',
    summary: 'One assistant',
    description: 'Unknown, or one the caller may not use: 404.',
    input: t.Object({ assistantId: t.String({ minLength: 1, maxLength: 100 }) }),
    output: t.Object({ assistant: AssistantSchema }),
    errors: [404],
    handler: async ({ input, user, deps }) => {
      const a = await usableAssistant(deps, user, input.assistantId);
      if (!a) throw notFound();
      return { assistant: await viewOf(deps, a, user) };
    },
  }),
  defineOperation({
    path: 'assistants/create',
    summary: 'Save an assistant: instructions, a model and tools under a name',
    description:
      'The caller\'s own (only they see it), or with `shared: true` (admins only, else 403) one for every user (`visibility: "everyone"`, the default) or for the users of some subscription tiers (`visibility: "tiers"`, `tiers`). ' +
      'A model the catalogue does not offer to whoever may use it (the caller\'s tier for their own; every tier, or each of `tiers`, for a shared one): 400 naming `model`. Own assistants past PARLEY_ASSISTANTS_MAX_PER_USER: 409. ' +
      '`knowledgeFileIds` not the caller\'s documents, or `mcpServerIds` not servers its users may have (for a shared one, the admin\'s): 400 naming each.',
    input: CreateInput,
    output: t.Object({ assistant: AssistantSchema }),
    errors: [403, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const shared = input.shared === true;
      if (shared && !user.isAdmin) throw forbidden();
      const who = sharing(shared, input.visibility, input.tiers);
      await checkModel(deps, input.model, tiersFor(user, who));
      await checkAssistantResources(deps, user, shared, input);
      const fields = fieldsOf(input, who);
      const max = deps.config.assistantsMaxPerUser;
      const a = await deps.store.write(function* (tx) {
        if (!shared)
          yield* checkCap(tx, 'assistantsMaxPerUser', user.id, max, countOwnAssistants(tx, user.id), (n) => [`You keep ${n} assistants`, 'Delete one you no longer use first (assistants/delete).']);
        return yield* insertAssistant(tx, shared ? null : user.id, fields, deps.now());
      });
      return { assistant: await viewOf(deps, a, user) };
    },
  }),
  defineOperation({
    path: 'assistants/update',
    summary: 'Change an assistant',
    description:
      'The fields given change (`model: null`: the default model; `tools: null`: whatever the admin allows). The caller\'s own, or a shared one by an admin: one the caller may use but not change 403, one they may not use 404. `visibility` and `tiers` apply to shared ones only. `knowledgeFileIds` and `mcpServerIds` are checked as in assistants/create (files it had stay allowed).',
    input: UpdateInput,
    output: t.Object({ assistant: AssistantSchema }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const a = await editableAssistant(deps, user, input.assistantId);
      const { assistantId: _, ...fields } = input;
      await checkAssistantResources(deps, user, a.ownerId === null, input, a);
      const { change, checkTiers } = changeOf(a, user, fields);
      if (checkTiers) await checkModel(deps, change.model === undefined ? a.model : change.model, checkTiers);
      const updated = await deps.store.write((tx) => updateAssistant(tx, a.id, change, deps.now()));
      return { assistant: await viewOf(deps, updated, user) };
    },
  }),
  defineOperation({
    path: 'assistants/delete',
    summary: 'Delete an assistant',
    description: 'Conversations started with it go on with Parley itself. The same refusals as assistants/update.',
    input: t.Object({ assistantId: t.String({ minLength: 1, maxLength: 100 }) }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      const a = await editableAssistant(deps, user, input.assistantId);
      await deps.store.write((tx) => deleteAssistant(tx, a.id));
      return { success: true };
    },
  }),
];
