import type { AppDeps } from '../deps';
import type { Assistant, User } from '../db/schema';
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
  const refused = (id: string) => `No document ${id} of yours: an assistant's knowledge is documents its owner uploaded (files/listFiles).`;
  await checkResources(deps, shared ? null : user.id, async (owners) => new Set(owners.filter((id) => id === user.id)), refused, input, before);
}

/**
 * The same check for a shared assistant saved by `parley assistant`, which acts for the server's
 * admins as a whole: its knowledge may be any admin's documents (as a turn reads them, `liveResources`).
 */
export async function checkSharedAssistantResources(deps: Pick<AppDeps, 'store'>, input: { knowledgeFileIds?: string[]; mcpServerIds?: string[] | null }, before?: Assistant): Promise<void> {
  const refused = (id: string) => `No document ${id} of an admin's: a shared assistant's knowledge is documents an admin uploaded (files/listFiles as that admin).`;
  await checkResources(deps, null, (owners) => deps.store.read((tx) => adminsAmong(tx, owners)), refused, input, before);
}

async function checkResources(
  deps: Pick<AppDeps, 'store'>,
  ownerId: string | null,
  allowedOwners: (owners: string[]) => Promise<Set<string>>,
  refusedFile: (id: string) => string,
  input: { knowledgeFileIds?: string[]; mcpServerIds?: string[] | null },
  before?: Assistant,
): Promise<void> {
  const fileIds = input.knowledgeFileIds ?? [];
  const serverIds = input.mcpServerIds ?? [];
  const [files, servers] = await deps.store.read(function* (tx) {
    return [yield* findDocumentsByIds(tx, fileIds), yield* findMcpServersByIds(tx, serverIds)] as const;
  });
  const allowed = await allowedOwners([...new Set(files.map((f) => f.userId))]);
  const had = new Set(before?.knowledgeFileIds ?? []);
  const issues: ValidationIssue[] = [];
  fileIds.forEach((id, i) => {
    const f = files.find((x) => x.id === id);
    if (!f || (!allowed.has(f.userId) && !had.has(id)))
      issues.push({
        path: ['knowledgeFileIds', i],
        message: refusedFile(id),
      });
  });
  serverIds.forEach((id, i) => {
    const s = servers.find((x) => x.id === id);
    if (!s || !serverAllowed(ownerId, s))
      issues.push({
        path: ['mcpServerIds', i],
        message: ownerId === null ? `No MCP server ${id} of the admin's: a shared assistant uses the servers every user has (admin/listMcpServers).` : `No MCP server ${id} that you may use (mcp/listServers).`,
      });
  });
  if (issues.length) throw invalidInput(issues);
}

/** Which of these users are admins now. */
function* adminsAmong(tx: Tx, userIds: readonly string[]): Work<Set<string>> {
  const admins = new Set<string>();
  for (const userId of userIds) if ((yield* findUser(tx, userId))?.isAdmin) admins.add(userId);
  return admins;
}

export type LiveResources = Pick<TurnAssistant, 'knowledgeFileIds' | 'mcpServerIds'>;

/**
 * Each assistant's knowledge files it may read now (they exist; a user's own assistant's are
 * still the owner's, a shared one's an admin's) and its MCP servers that exist and it may still
 * name (null stays null: whatever its user has), by assistant id, in one read for a whole list.
 */
export function* liveResources(tx: Tx, list: readonly Assistant[]): Work<Map<string, LiveResources>> {
  const files = yield* findDocumentsByIds(tx, [...new Set(list.flatMap((a) => a.knowledgeFileIds))]);
  const servers = yield* findMcpServersByIds(tx, [...new Set(list.flatMap((a) => a.mcpServerIds ?? []))]);
  const admins = list.some((a) => a.ownerId === null) ? yield* adminsAmong(tx, [...new Set(files.map((f) => f.userId))]) : new Set<string>();
  const fileOk = (a: Assistant, id: string) => {
    const f = files.find((x) => x.id === id);
    return !!f && (a.ownerId === null ? admins.has(f.userId) : f.userId === a.ownerId);
  };
  const serverOk = (a: Assistant, id: string) => {
    const s = servers.find((x) => x.id === id);
    return !!s && serverAllowed(a.ownerId, s);
  };
  return new Map(
    list.map((a) => [a.id, { knowledgeFileIds: a.knowledgeFileIds.filter((id) => fileOk(a, id)), mcpServerIds: a.mcpServerIds && a.mcpServerIds.filter((id) => serverOk(a, id)) }]),
  );
}

/** What a turn's tool sources read of its assistant (src/tools/tool.types.ts). */
export async function turnAssistantOf(deps: AppDeps, a: Assistant): Promise<TurnAssistant> {
  const live = await deps.store.read((tx) => liveResources(tx, [a]));
  return { id: a.id, tools: a.tools, ...live.get(a.id)! };
}
