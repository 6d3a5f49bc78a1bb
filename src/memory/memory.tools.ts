import type { AiTool, MemoryAction } from '../ai/ai.types';
import type { AppDeps } from '../deps';
import type { Memory } from '../db/schema';
import { findUser } from '../account/account.store';
import { addMemory, deleteMemory, updateMemory } from './memory.store';
import { MEMORY_MAX_CHARS, fullMessage } from './memory.rules';
import type { ToolSource } from '../tools/tool.types';

export const MEMORY_OFF = 'Memory is turned off by the user: nothing was saved or changed.';

type Outcome = { memory: Memory; output: string } | { refusal: string };

interface MemoryToolSpec {
  name: string;
  action: MemoryAction;
  description: string;
  parameters: Record<string, unknown>;
  act(args: Record<string, unknown>, callKey: string): Promise<Outcome>;
}

/** The memory tools, to the registry (src/tools/): offered while the user's `enableMemories` is on. */
export const memoryToolSource: ToolSource = {
  id: 'memory',
  label: 'Memory',
  priority: 70,
  async tools(turn) {
    return turn.user.enableMemories ? memoryTools(turn.deps, { userId: turn.user.id, responseId: turn.responseId }) : [];
  },
};

/**
 * The function tools that let the model keep facts about the user (docs/memory.md): offered only
 * while the user's `enableMemories` is on, and acting on that user's memories alone. Each call
 * reads the preferences again: switched off since the turn began, the call is refused and nothing
 * is shown; `showMemoryToolOutput` decides whether the stream shows the call's `memory.*` events.
 */
export function memoryTools(deps: AppDeps, ctx: { userId: string; responseId: string }): AiTool[] {
  const tool = (spec: MemoryToolSpec): AiTool => ({
    name: spec.name,
    description: spec.description,
    parameters: spec.parameters,
    async run(args, emit, callId, callKey) {
      const user = await deps.store.read((tx) => findUser(tx, ctx.userId));
      if (!user?.enableMemories) return MEMORY_OFF;
      const show = user.showMemoryToolOutput;
      if (show) emit({ type: 'memory.in_progress', itemId: callId, action: spec.action });
      const outcome = await spec.act(args, callKey);
      if ('refusal' in outcome) {
        if (show) emit({ type: 'memory.error', itemId: callId, action: spec.action, error: outcome.refusal });
        return outcome.refusal;
      }
      if (show) emit({ type: 'memory.completed', itemId: callId, action: spec.action, memoryId: outcome.memory.id, content: outcome.memory.content });
      return outcome.output;
    },
  });
  const noSuch = (id: string) => ({ refusal: `No memory has the id "${id}": nothing was changed.` });
  return [
    tool({
      name: 'save_memory',
      action: 'save',
      description:
        'Remember one lasting fact about the user for later conversations: a preference, their circumstances, something they ask you to remember. One short fact per call; not for what only this conversation needs.',
      parameters: { type: 'object', properties: { content: { type: 'string', description: `The fact, in at most ${MEMORY_MAX_CHARS} characters` } }, required: ['content'] },
      async act(args, callKey) {
        const checked = contentOf(args);
        if ('refusal' in checked) return checked;
        const max = deps.config.memoryMaxPerUser;
        // Saved before this call's events and output are (a moment later): a restart in between
        // runs the call again, which must find this memory, not save a second one.
        const origin = `${ctx.responseId}:${callKey}`;
        const added = await deps.store.write((tx) => addMemory(tx, { userId: ctx.userId, content: checked.content, origin, max }, deps.now()));
        if (!added.ok) return { refusal: `Nothing was saved. ${fullMessage(max)} Tell the user, or forget a memory that no longer matters.` };
        return { memory: added.memory, output: `Saved as memory ${added.memory.id}.` };
      },
    }),
    tool({
      name: 'update_memory',
      action: 'update',
      description: 'Correct one of the memories listed in the system message, by its id, when it is no longer accurate.',
      parameters: {
        type: 'object',
        properties: { id: { type: 'string', description: 'The memory\'s id' }, content: { type: 'string', description: `Its new text, at most ${MEMORY_MAX_CHARS} characters` } },
        required: ['id', 'content'],
      },
      async act(args) {
        const id = typeof args.id === 'string' ? args.id : '';
        const checked = contentOf(args);
        if ('refusal' in checked) return checked;
        const updated = await deps.store.write((tx) => updateMemory(tx, ctx.userId, id, checked.content, deps.now()));
        return updated ? { memory: updated, output: `Memory ${id} updated.` } : noSuch(id);
      },
    }),
    tool({
      name: 'forget_memory',
      action: 'forget',
      description: 'Delete one of the memories listed in the system message, by its id: when the user asks you to forget it, or it is wrong.',
      parameters: { type: 'object', properties: { id: { type: 'string', description: 'The memory\'s id' } }, required: ['id'] },
      async act(args) {
        const id = typeof args.id === 'string' ? args.id : '';
        const deleted = await deps.store.write((tx) => deleteMemory(tx, ctx.userId, id));
        return deleted ? { memory: deleted, output: `Memory ${id} forgotten.` } : noSuch(id);
      },
    }),
  ];
}

/** The call's `content`, trimmed, or why it cannot be kept. */
function contentOf(args: Record<string, unknown>): { content: string } | { refusal: string } {
  const content = typeof args.content === 'string' ? args.content.trim() : '';
  if (!content) return { refusal: 'The memory is empty: nothing was saved.' };
  if (content.length > MEMORY_MAX_CHARS)
    return { refusal: `A memory is at most ${MEMORY_MAX_CHARS} characters and this one has ${content.length}: nothing was saved. Keep one short fact.` };
  return { content };
}
