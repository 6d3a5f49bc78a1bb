import type { AppDeps } from '../deps';
import type { Assistant, FileRow, User } from '../db/schema';
import type { Tx, Work } from '../db/work';
import { invalidInput, type ValidationIssue } from '../http/errors';
import { findUser } from '../account/account.store';
import { findDocumentsByIds } from '../files/file.store';
import { findMcpServersByIds } from '../mcp/mcp-server.store';
import type { TurnAssistant } from '../tools/tool.types';

/**
 * What an assistant brings from other domains (docs/assistants.md, "Knowledge and MCP
 * servers"): its knowledge files (documents it always searches) and the MCP servers whose tools
 * it gets. Checked when it is saved, and again at every turn and every view, since files and
 * servers are removed, and admins stop being admins, without the assistant being told.
 */

/** At most this many of each on one assistant. */
export const KNOWLEDGE_FILES_MAX = 50;
export const MCP_SERVERS_MAX = 50;

/** A shared assistant's (`ownerId` null) files are an admin's; a user's own, that user's. */
function* knowledgeReadable(tx: Tx, ownerId: string | null, files: FileRow[]): Work<FileRow[]> {
  if (ownerId !== null) return files.filter((f) => f.userId === ownerId);
  const admins = new Set<string>();
  for (const userId of new Set(files.map((f) => f.userId))) if ((yield* findUser(tx, userId))?.isAdmin) admins.add(userId);
  return files.filter((f) => admins.has(f.userId));
}

/** The servers an assistant may name: the admin's for a shared one; the admin's and the owner's own for a user's. */
const serverAllowed = (ownerId: string | null, server: { ownerId: string | null }) => server.ownerId === null || server.ownerId === ownerId;

/**
 * The knowledge files and MCP servers an assistant being saved names, checked for `user` (its
 * owner, or the admin saving a shared one): their own documents (for a shared one, the admin's);
 * servers they may use (for a shared one, the admin's servers only). Ids it already had stay
 * allowed (another admin's file on a shared assistant). A 400 names each one refused.
 */
export async function checkAssistantResources(
  deps: AppDeps,
  user: User,
  shared: boolean,
  input: { knowledgeFileIds?: string[]; mcpServerIds?: string[] | null },
  before?: Assistant,
): Promise<void> {
  const ownerId = shared ? null : user.id;
  const fileIds = input.knowledgeFileIds ?? [];
  const serverIds = input.mcpServerIds ?? [];
  const [files, servers] = await deps.store.read(function* (tx) {
    return [yield* findDocumentsByIds(tx, fileIds), yield* findMcpServersByIds(tx, serverIds)] as const;
  });
  const had = new Set(before?.knowledgeFileIds ?? []);
  const issues: ValidationIssue[] = [];
  fileIds.forEach((id, i) => {
    const f = files.find((x) => x.id === id);
    if (!f || (f.userId !== user.id && !had.has(id)))
      issues.push({ path: ['knowledgeFileIds', i], message: `No document ${id} of yours: an assistant's knowledge is documents its owner uploaded (files/listFiles).` });
  });
  serverIds.forEach((id, i) => {
    const s = servers.find((x) => x.id === id);
    if (!s || !serverAllowed(ownerId, s))
      issues.push({
        path: ['mcpServerIds', i],
        message: shared ? `No MCP server ${id} of the admin's: a shared assistant uses the servers every user has (admin/listMcpServers).` : `No MCP server ${id} that you may use (mcp/listServers).`,
      });
  });
  if (issues.length) throw invalidInput(issues);
}

/** The ids of an assistant's knowledge files it may read now. */
export function* liveKnowledge(tx: Tx, a: Pick<Assistant, 'ownerId' | 'knowledgeFileIds'>): Work<string[]> {
  const files = yield* findDocumentsByIds(tx, a.knowledgeFileIds);
  return (yield* knowledgeReadable(tx, a.ownerId, files)).map((f) => f.id);
}

/** The ids of its MCP servers that still exist and it may still name (null stays null: whatever its user has). */
export function* liveMcpServers(tx: Tx, a: Pick<Assistant, 'ownerId' | 'mcpServerIds'>): Work<string[] | null> {
  if (a.mcpServerIds === null) return null;
  const servers = yield* findMcpServersByIds(tx, a.mcpServerIds);
  return servers.filter((s) => serverAllowed(a.ownerId, s)).map((s) => s.id);
}

/** What a turn's tool sources read of its assistant (src/tools/tool.types.ts). */
export async function turnAssistantOf(deps: AppDeps, a: Assistant): Promise<TurnAssistant> {
  return deps.store.read(function* (tx) {
    return { id: a.id, tools: a.tools, mcpServerIds: yield* liveMcpServers(tx, a), knowledgeFileIds: yield* liveKnowledge(tx, a) };
  });
}

/** As the API shows them: files and servers removed since are left out. */
export async function resourcesView(deps: AppDeps, a: Assistant): Promise<{ knowledgeFileIds: string[]; mcpServerIds: string[] | null }> {
  const { knowledgeFileIds, mcpServerIds } = await turnAssistantOf(deps, a);
  return { knowledgeFileIds, mcpServerIds };
}
