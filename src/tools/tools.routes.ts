import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, forbidden, invalidInput, notFound } from '../http/errors';
import type { AppDeps } from '../deps';
import type { User } from '../db/schema';
import { afterCommit } from '../db/work';
import { iso } from '../ids';
import { canWriteConversation, findConversationById } from '../chat/conversation.store';
import { findResponseById } from '../chat/response.store';
import { decideApproval, deleteToolRule, findApprovalOfItem, listToolRules, setToolRule } from './approval.store';
import { approvalTopic } from './ask-first';
import { readToolSettings, sourceEnabled, writeToolSettings, type ToolSettings } from './tool-settings';
import type { SourceStatus, ToolSource } from './tool.types';

// Tool approval for users, and the tool switches for admins (docs/chat.md, "Tool approval";
// docs/assistants.md, "Tools for admins"): thin handlers over src/tools/.

const Approval = t.Union([t.Literal('never'), t.Literal('ask')]);
const Decision = t.Union([t.Literal('approve'), t.Literal('deny')]);

/** The conversation the caller writes to: unknown 404, someone else's 403. */
async function writableConversation(deps: AppDeps, user: User, conversationId: string): Promise<void> {
  const ok = await deps.store.read(function* (tx) {
    if (!(yield* findConversationById(tx, conversationId))) return 404;
    return (yield* canWriteConversation(tx, conversationId, user.id)) ? 200 : 403;
  });
  if (ok === 404) throw notFound();
  if (ok === 403) throw forbidden();
}

const SourceView = t.Object({
  id: t.String(),
  label: t.String(),
  priority: t.Integer(),
  kinds: t.Array(t.String()),
  enabled: t.Boolean({ description: "The admin's switch; where the admin has not switched it, the source's default (on; the code interpreter: off unless PARLEY_CODE_INTERPRETER)." }),
  available: t.Boolean({ description: 'false: it can offer nothing on this server now (no connection of its kind, its runtime not installed), whatever the switch says.' }),
  unavailableReason: t.Union([t.String(), t.Null()], { description: 'Why it is not available, in a sentence for the admin; null when it is.' }),
  note: t.Union([t.String(), t.Null()], { description: 'What turning it on costs or needs (the code interpreter: its sandboxes\' memory); null: nothing to say.' }),
  tiers: t.Union([t.Array(t.String()), t.Null()], { description: 'The subscription tiers whose users get its tools; null: every tier.' }),
  approval: Approval,
  tools: t.Array(t.Object({ name: t.String(), label: t.String(), description: t.String(), approval: Approval }), {
    description: 'What the source offers the calling admin now (a source may offer others more or less: MCP servers are per user).',
  }),
});
const SettingsView = t.Object({
  sources: t.Array(SourceView),
  tools: t.Array(t.Object({ name: t.String(), approval: Approval }), { description: 'The per-tool choices, by name.' }),
});

async function settingsView(deps: AppDeps, admin: User) {
  const settings = await deps.store.read(readToolSettings);
  const [catalogue, statuses] = await Promise.all([
    deps.tools.catalogue({
    deps,
    kind: 'chat',
    user: { id: admin.id, subscriptionTier: admin.subscriptionTier, enableMemories: true },
    conversationId: '',
    responseId: '',
    provider: 'openai-chat',
    }),
    Promise.all(deps.tools.sources().map(async (source) => [source.id, await statusOf(deps, source)] as const)).then((all) => new Map(all)),
  ]);
  return {
    sources: catalogue.map(({ source, tools }) => {
      const s = settings.sources[source.id];
      const status = statuses.get(source.id) ?? {};
      return {
        id: source.id,
        label: source.label,
        priority: source.priority ?? 50,
        kinds: [...(source.kinds ?? ['chat', 'research'])],
        enabled: sourceEnabled(s, source, deps.config),
        available: !status.unavailable,
        unavailableReason: status.unavailable ?? null,
        note: status.note ?? null,
        tiers: s?.tiers ?? null,
        approval: s?.approval ?? 'never',
        tools: tools.map((d) => ({ name: d.name, label: d.label, description: d.description, approval: d.approval })),
      };
    }),
    tools: Object.entries(settings.tools).map(([name, v]) => ({ name, approval: v.approval })),
  };
}

/** A source's own account of itself; one that fails to say is taken as available (its tools then say what is wrong). */
async function statusOf(deps: AppDeps, source: ToolSource): Promise<SourceStatus> {
  try {
    return (await source.status?.(deps)) ?? {};
  } catch (err) {
    deps.log.warn('a tool source could not say whether it is available', { source: source.id, cause: err instanceof Error ? err.message : String(err) });
    return {};
  }
}

export const toolOperations = [
  defineOperation({
    path: 'chat/approveToolCall',
    summary: 'Answer a tool call waiting for approval',
    description:
      'A call of an "ask first" tool waits, after the stream\'s `tool_call.approval_required {itemId, name, label, arguments}`, for this answer from the user whose turn it is ' +
      '(`responseId` from `response.created`, `itemId` from the event). `approve` runs it; `deny` tells the model it was denied. `scope: "conversation"` also answers every later call of the same tool ' +
      'in this conversation the same way, for this user (chat/listToolRules, chat/deleteToolRule). The turn may run on any instance; the answer reaches it. ' +
      'Unknown response or one the caller cannot follow: 404; a writer of the conversation who did not start the turn: 403; no such call waiting: 404; answered already or timed out: 409 with `data.status`.',
    input: t.Object({
      responseId: t.String({ minLength: 1, maxLength: 100 }),
      itemId: t.String({ minLength: 1, maxLength: 200 }),
      decision: Decision,
      scope: t.Optional(t.Union([t.Literal('once'), t.Literal('conversation')], { default: 'once' })),
    }),
    output: t.Object({ success: t.Boolean(), status: t.Union([t.Literal('approved'), t.Literal('denied')]) }),
    errors: [403, 404, 409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const now = deps.now();
      const answered = await deps.store.write(function* (tx) {
        const response = yield* findResponseById(tx, input.responseId);
        if (!response) throw notFound();
        if (response.userId !== user.id) throw (yield* canWriteConversation(tx, response.conversationId, user.id)) ? forbidden() : notFound();
        const row = yield* findApprovalOfItem(tx, response.id, input.itemId);
        if (!row) throw notFound();
        const status = input.decision === 'approve' ? 'approved' : 'denied';
        const decided = yield* decideApproval(tx, row.id, status, 'user', now);
        if (!decided)
          throw new AppError('CONFLICT', {
            message: row.decidedBy === 'timeout' ? 'This tool call waited too long for an answer and was denied.' : `This tool call was answered already (${row.status}).`,
            data: { status: row.status, decidedBy: row.decidedBy },
          });
        if (input.scope === 'conversation')
          yield* setToolRule(tx, { conversationId: response.conversationId, userId: user.id, toolName: row.toolName, decision: input.decision }, now);
        // The turn waits on whichever instance runs it: the cluster bus carries this to it.
        yield* afterCommit(() => deps.bus.publish(approvalTopic(row.id), { status }));
        return decided;
      });
      return { success: true, status: answered.status as 'approved' | 'denied' };
    },
  }),
  defineOperation({
    path: 'chat/listToolRules',
    summary: "The caller's standing answers for tools in one conversation",
    description: 'The "always for this conversation" answers the caller gave (chat/approveToolCall with `scope: "conversation"`). Unknown conversation: 404; one the caller does not write to: 403.',
    input: t.Object({ conversationId: t.String({ minLength: 1, maxLength: 100 }) }),
    output: t.Object({ rules: t.Array(t.Object({ toolName: t.String(), decision: Decision, createdAt: t.String({ format: 'date-time' }) })) }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      await writableConversation(deps, user, input.conversationId);
      const rules = await deps.store.read((tx) => listToolRules(tx, input.conversationId, user.id));
      return { rules: rules.map((r) => ({ toolName: r.toolName, decision: r.decision, createdAt: iso(r.createdAt) })) };
    },
  }),
  defineOperation({
    path: 'chat/deleteToolRule',
    summary: 'Forget a standing answer for a tool in one conversation',
    description: 'The tool asks again at its next call. `success: false` when there was none. Unknown conversation: 404; one the caller does not write to: 403.',
    input: t.Object({ conversationId: t.String({ minLength: 1, maxLength: 100 }), toolName: t.String({ minLength: 1, maxLength: 200 }) }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      await writableConversation(deps, user, input.conversationId);
      return { success: await deps.store.write((tx) => deleteToolRule(tx, input.conversationId, user.id, input.toolName)) };
    },
  }),
  defineOperation({
    path: 'admin/getToolSettings',
    summary: 'Tool sources, their tools, and the switches on them',
    description:
      'Admins only: any other caller is answered 403. Every registered tool source with whether it is on (where the admin has not switched it, its default: on, but the code interpreter off), for which tiers, ' +
      'whether it asks first, whether it can offer anything on this server (`available`; `unavailableReason` says what is missing), what turning it on costs (`note`), and the tools it offers the calling admin now.',
    input: t.Object({}),
    output: SettingsView,
    errors: [403],
    admin: true,
    handler: async ({ user, deps }) => settingsView(deps, user),
  }),
  defineOperation({
    path: 'admin/setToolSettings',
    summary: 'Switch tool sources on or off, per tier, and mark sources or tools "ask first"',
    description:
      'Admins only: any other caller is answered 403. Each source named is changed in the fields given (`tiers: null`: every tier); each tool named gets `approval` (`null`: back to its source\'s). ' +
      'An unknown source id is a 400; a source that is not available may still be switched (it applies once its connection or runtime is there). Takes effect at the next turn on every instance. Answers as admin/getToolSettings.',
    input: t.Object({
      sources: t.Optional(
        t.Array(
          t.Object({
            id: t.String({ minLength: 1, maxLength: 40 }),
            enabled: t.Optional(t.Boolean()),
            tiers: t.Optional(t.Union([t.Array(t.String({ minLength: 1, maxLength: 50 }), { maxItems: 50 }), t.Null()])),
            approval: t.Optional(Approval),
          }),
          { maxItems: 100 },
        ),
      ),
      tools: t.Optional(t.Array(t.Object({ name: t.String({ minLength: 1, maxLength: 200 }), approval: t.Union([Approval, t.Null()]) }), { maxItems: 1000 })),
    }),
    output: SettingsView,
    errors: [403],
    admin: true,
    handler: async ({ input, user, deps }) => {
      const known = new Set(deps.tools.sources().map((s) => s.id));
      const unknown = (input.sources ?? []).flatMap((s, i) => (known.has(s.id) ? [] : [{ path: ['sources', i, 'id'], message: `no tool source "${s.id}" (there are: ${[...known].join(', ')})` }]));
      if (unknown.length) throw invalidInput(unknown);
      await deps.store.write(function* (tx) {
        const settings: ToolSettings = yield* readToolSettings(tx);
        for (const { id, ...change } of input.sources ?? []) settings.sources[id] = { ...settings.sources[id], ...change };
        for (const { name, approval } of input.tools ?? []) {
          if (approval === null) delete settings.tools[name];
          else settings.tools[name] = { approval };
        }
        yield* writeToolSettings(tx, settings, deps.now());
      });
      return settingsView(deps, user);
    },
  }),
];
