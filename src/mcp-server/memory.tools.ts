import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/server';
import type { AppDeps } from '../deps';
import type { Memory } from '../db/schema';
import { findUser } from '../account/account.store';
import { addMemory, deleteMemory, listMemories, updateMemory } from '../memory/memory.store';
import { MEMORY_MAX_CHARS, fullMessage, oneLine } from '../memory/memory.rules';
import { MEMORY_OFF } from '../memory/memory.tools';
import { answer, refusal, type McpCaller } from './mcp-tool';

const Content = z.string().min(1).max(MEMORY_MAX_CHARS).regex(/\S/).describe(`One lasting fact, at most ${MEMORY_MAX_CHARS} characters.`);
const MemoryId = z.string().min(1).max(100).describe('The id list_memories shows.');

const view = (m: Memory) => ({ id: m.id, content: m.content, createdAt: new Date(m.createdAt).toISOString(), updatedAt: new Date(m.updatedAt).toISOString() });
/** Another user's memory reads as an unknown one, as for the assistant's memory tools. */
const noSuch = (id: string) => refusal(`No memory has the id "${id}": nothing was changed.`);

/**
 * The user's memories (docs/memory.md) as MCP tools, offered only while the user's
 * `enableMemories` is on (src/mcp-server/mcp-server.ts): the same facts Parley's own assistant
 * reads, so what an editor's agent learns about the user, Parley knows too. Each call reads the
 * preference again, as the assistant's tools do: turned off meanwhile, nothing is changed.
 */
export function registerMemoryTools(server: McpServer, deps: AppDeps, caller: McpCaller) {
  const userId = caller.user.id;
  const stillOn = async () => !!(await deps.store.read((tx) => findUser(tx, userId)))?.enableMemories;

  server.registerTool(
    'list_memories',
    {
      title: 'List memories',
      description: 'The facts the user lets Parley keep about them across conversations, the most recently updated first, each with its id.',
      inputSchema: z.object({}),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async () => {
      if (!(await stillOn())) return refusal(MEMORY_OFF);
      const memories = (await deps.store.read((tx) => listMemories(tx, userId))).map(view);
      const text = memories.length ? memories.map((m) => `- [${m.id}] ${oneLine(m.content)}`).join('\n') : 'No memories yet.';
      return answer(text, { memories, max: deps.config.memoryMaxPerUser });
    },
  );

  server.registerTool(
    'add_memory',
    {
      title: 'Remember a fact',
      description: 'Keep one lasting fact about the user (a preference, their circumstances, something they asked to be remembered) for later conversations, here and in Parley.',
      inputSchema: z.object({ content: Content }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async ({ content }) => {
      if (!(await stillOn())) return refusal(MEMORY_OFF);
      const max = deps.config.memoryMaxPerUser;
      const added = await deps.store.write((tx) => addMemory(tx, { userId, content: content.trim(), max }, deps.now()));
      if (!added.ok) return refusal(fullMessage(max));
      return answer(`Saved as memory ${added.memory.id}.`, view(added.memory));
    },
  );

  server.registerTool(
    'update_memory',
    {
      title: 'Change a memory',
      description: 'Replace the text of one of the user\'s memories.',
      inputSchema: z.object({ id: MemoryId, content: Content }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ id, content }) => {
      if (!(await stillOn())) return refusal(MEMORY_OFF);
      const updated = await deps.store.write((tx) => updateMemory(tx, userId, id, content.trim(), deps.now()));
      return updated ? answer(`Memory ${id} updated.`, view(updated)) : noSuch(id);
    },
  );

  server.registerTool(
    'forget_memory',
    {
      title: 'Forget a memory',
      description: 'Delete one of the user\'s memories.',
      inputSchema: z.object({ id: MemoryId }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ id }) => {
      if (!(await stillOn())) return refusal(MEMORY_OFF);
      const gone = await deps.store.write((tx) => deleteMemory(tx, userId, id));
      return gone ? answer(`Memory ${id} forgotten.`, view(gone)) : noSuch(id);
    },
  );
}
