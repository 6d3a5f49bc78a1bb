import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, forbidden, notFound } from '../http/errors';
import { capData } from '../http/user-caps';
import type { AppDeps } from '../deps';
import type { Memory } from '../db/schema';
import { iso } from '../ids';
import { addMemory, deleteAllMemories, deleteMemory, findMemoryById, listMemories, updateMemory } from './memory.store';
import { MEMORY_MAX_CHARS, fullMessage } from './memory.rules';

const Timestamp = t.String({ format: 'date-time' });
const MemorySchema = t.Object({ id: t.String(), content: t.String(), createdAt: Timestamp, updatedAt: Timestamp });
// Not blank: at least one character that is not white space (the content is stored trimmed).
const Content = t.String({ minLength: 1, maxLength: MEMORY_MAX_CHARS, pattern: '\\S' });

const memoryView = (m: Memory) => ({ id: m.id, content: m.content, createdAt: iso(m.createdAt), updatedAt: iso(m.updatedAt) });

/** The caller's memory: unknown → 404, someone else's → 403 (as bookmarks). */
async function ownMemory(deps: AppDeps, id: string, userId: string): Promise<Memory> {
  const memory = await deps.store.read((tx) => findMemoryById(tx, id));
  if (!memory) throw notFound();
  if (memory.userId !== userId) throw forbidden();
  return memory;
}

export const memoryOperations = [
  defineOperation({
    path: 'memories/listMemories',
    summary: "The caller's memories, the most recently updated first",
    description: '`max` is how many one user may keep (PARLEY_MEMORY_MAX_PER_USER).',
    input: t.Object({}),
    output: t.Object({ memories: t.Array(MemorySchema), max: t.Number() }),
    handler: async ({ user, deps }) => ({
      memories: (await deps.store.read((tx) => listMemories(tx, user.id))).map(memoryView),
      max: deps.config.memoryMaxPerUser,
    }),
  }),
  defineOperation({
    path: 'memories/addMemory',
    summary: 'Keep a fact about the caller for later conversations',
    description: `\`content\`: 1-${MEMORY_MAX_CHARS} characters, not blank (stored trimmed). A caller who already keeps PARLEY_MEMORY_MAX_PER_USER memories: 409.`,
    input: t.Object({ content: Content }),
    output: MemorySchema,
    errors: [409],
    rateLimit: 'write',
    handler: async ({ input, user, deps }) => {
      const max = deps.config.memoryMaxPerUser;
      const added = await deps.store.write((tx) => addMemory(tx, { userId: user.id, content: input.content.trim(), max }, deps.now()));
      if (!added.ok) throw new AppError('CONFLICT', { message: fullMessage(max), data: capData('memoryMaxPerUser', max) });
      return memoryView(added.memory);
    },
  }),
  defineOperation({
    path: 'memories/updateMemory',
    summary: "Change the text of one of the caller's memories",
    description: 'Unknown memory: 404; another user\'s: 403.',
    input: t.Object({ id: t.String(), content: Content }),
    output: MemorySchema,
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      await ownMemory(deps, input.id, user.id);
      const updated = await deps.store.write((tx) => updateMemory(tx, user.id, input.id, input.content.trim(), deps.now()));
      // Deleted between the check and the write.
      if (!updated) throw notFound();
      return memoryView(updated);
    },
  }),
  defineOperation({
    path: 'memories/deleteMemory',
    summary: "Delete one of the caller's memories",
    description: 'Unknown memory: 404; another user\'s: 403.',
    input: t.Object({ id: t.String() }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, user, deps }) => {
      await ownMemory(deps, input.id, user.id);
      return { success: !!(await deps.store.write((tx) => deleteMemory(tx, user.id, input.id))) };
    },
  }),
  defineOperation({
    path: 'memories/deleteAllMemories',
    summary: "Delete every one of the caller's memories",
    input: t.Object({}),
    output: t.Object({ success: t.Boolean(), deletedCount: t.Number() }),
    handler: async ({ user, deps }) => ({ success: true, deletedCount: await deps.store.write((tx) => deleteAllMemories(tx, user.id)) }),
  }),
];
