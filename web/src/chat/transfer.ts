import { ApiError, call, type Conversation } from '../shared/api';

/**
 * Conversations out and in (docs/chat.md, "Export and import"). Out: Markdown to read, or JSON
 * to bring back. In: that JSON, or ChatGPT's data export (`conversations.json`), each
 * conversation sent with `chat/importConversation`.
 */
interface StoredItem {
  role: string;
  content: string;
  createdAt: string;
}
export interface ExportedConversation {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
  messages: { role: 'user' | 'assistant'; content: string; createdAt: string }[];
}
export const EXPORT_FORMAT = 'parley.conversations';

export async function exportOne(conversationId: string): Promise<ExportedConversation> {
  const r = await call<{ conversation: Conversation & { createdAt: string }; items: StoredItem[] }>('chat/getConversation', { conversationId });
  return {
    id: r.conversation.id,
    title: r.conversation.title,
    createdAt: r.conversation.createdAt,
    updatedAt: r.conversation.updatedAt,
    messages: r.items.filter((i) => i.role === 'user' || i.role === 'assistant').map((i) => ({ role: i.role as 'user' | 'assistant', content: i.content, createdAt: i.createdAt })),
  };
}

/** Every chat conversation of the user (group chats' are their group's), page by page. */
export async function exportAll(onProgress?: (done: number) => void): Promise<ExportedConversation[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { conversations: Conversation[]; nextCursor: string | null } = await call('chat/listConversations', { limit: 100, groups: false, ...(cursor ? { cursor } : {}) });
    ids.push(...page.conversations.map((c) => c.id));
    cursor = page.nextCursor;
  } while (cursor);
  const out: ExportedConversation[] = [];
  for (const id of ids) {
    out.push(await exportOne(id));
    onProgress?.(out.length);
  }
  return out;
}

export const asJson = (conversations: ExportedConversation[]) => JSON.stringify({ format: EXPORT_FORMAT, version: 1, conversations }, null, 2);

export function asMarkdown(conversations: ExportedConversation[]): string {
  return conversations
    .map((c) => [`# ${c.title || 'Untitled conversation'}`, '', ...c.messages.flatMap((m) => [`## ${m.role === 'user' ? 'You' : 'Parley'}`, '', m.content.trim(), ''])].join('\n'))
    .join('\n---\n\n');
}

/** Hand text to the browser's download, as a file of this name. */
export function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export const fileNameOf = (title: string, ext: string) => `${(title || 'conversation').replace(/[^\p{L}\p{N} _-]+/gu, '').trim().slice(0, 60) || 'conversation'}.${ext}`;

type Importable = { title: string; messages: { role: 'user' | 'assistant'; content: string; createdAt?: string }[] };

/** ChatGPT's node: a message (or none, at the root) and its place in the tree. */
interface ChatGptNode {
  parent?: string | null;
  message?: { author?: { role?: string }; content?: { content_type?: string; parts?: unknown[] }; create_time?: number | null } | null;
}
interface ChatGptConversation {
  title?: string;
  create_time?: number;
  current_node?: string;
  mapping?: Record<string, ChatGptNode>;
}

/** One ChatGPT conversation: the path from `current_node` to the root, read root first (the branch the user saw last). */
function fromChatGpt(c: ChatGptConversation): Importable {
  const path: ChatGptNode[] = [];
  const seen = new Set<string>();
  for (let id = c.current_node; id && c.mapping?.[id] && !seen.has(id); id = c.mapping[id]!.parent ?? undefined) {
    seen.add(id);
    path.push(c.mapping[id]!);
  }
  const messages = path.reverse().flatMap((node) => {
    const role = node.message?.author?.role;
    if (role !== 'user' && role !== 'assistant') return [];
    const text = (node.message?.content?.parts ?? []).filter((p): p is string => typeof p === 'string').join('\n').trim();
    if (!text) return [];
    const t = node.message?.create_time;
    return [{ role: role as 'user' | 'assistant', content: text, ...(typeof t === 'number' ? { createdAt: new Date(t * 1000).toISOString() } : {}) }];
  });
  return { title: c.title?.trim() || 'Imported conversation', messages };
}

/** The conversations a file holds: Parley's JSON export or ChatGPT's `conversations.json`. */
export function parseImport(text: string): Importable[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error('The file is not JSON: choose a Parley JSON export or ChatGPT\'s conversations.json.');
  }
  if (data && typeof data === 'object' && (data as { format?: unknown }).format === EXPORT_FORMAT)
    return ((data as { conversations?: ExportedConversation[] }).conversations ?? []).map((c) => ({ title: c.title, messages: c.messages }));
  if (Array.isArray(data) && data.every((c) => c && typeof c === 'object' && 'mapping' in c)) return (data as ChatGptConversation[]).map(fromChatGpt);
  throw new Error('This file is neither a Parley export nor ChatGPT\'s conversations.json.');
}

/** How an import went: `stopped` is the refusal that ended it (a cap reached), with the conversation refused. */
export interface ImportOutcome {
  imported: number;
  skipped: number;
  stopped?: { error: unknown; title: string };
}

/**
 * Bring the conversations in, one request each, in the file's order; those without a message are
 * skipped. Past the write rate limit (a file of hundreds) it waits as the server says and goes on;
 * any other refusal (a cap on what imports keep, docs/chat.md) stops it, what came in staying in.
 */
export async function importConversations(list: Importable[], onProgress?: (done: number, waitSeconds?: number) => void): Promise<ImportOutcome> {
  let imported = 0;
  let skipped = 0;
  for (const c of list) {
    if (!c.messages.length) skipped++;
    else {
      // The server takes at most 2,000 messages a conversation: a longer one keeps its latest.
      const body = { title: c.title.slice(0, 200), messages: c.messages.slice(-2000) };
      for (;;) {
        try {
          await call('chat/importConversation', body);
          break;
        } catch (error) {
          if (!(error instanceof ApiError && error.status === 429)) return { imported, skipped, stopped: { error, title: c.title } };
          const wait = error.retryAfter ?? 1;
          onProgress?.(imported + skipped, wait);
          await new Promise((resolve) => setTimeout(resolve, wait * 1000));
        }
      }
      imported++;
    }
    onProgress?.(imported + skipped);
  }
  return { imported, skipped };
}
