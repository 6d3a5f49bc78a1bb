/** An assistant as `assistants/*` give it (docs/assistants.md). */
export interface Assistant {
  id: string;
  name: string;
  description: string;
  instructions: string;
  model: string | null;
  tools: string[] | null;
  knowledgeFileIds: string[];
  /** null: whatever its user has; []: none. */
  mcpServerIds: string[] | null;
  starters: string[];
  parameters: { temperature: number | null; topP: number | null; maxOutputTokens: number | null };
  avatarUrl: string | null;
  shared: boolean;
  visibility: 'private' | 'everyone' | 'tiers';
  tiers: string[];
  canEdit: boolean;
}

/** Parley's own tool sources (docs/assistants.md, "Tools and the admin's switches"), as the editor names them. */
export const TOOL_SOURCES: { id: string; label: string }[] = [
  { id: 'web_search', label: 'Web search' },
  { id: 'files', label: 'Files' },
  { id: 'memory', label: 'Memories' },
  { id: 'history', label: 'Past conversations' },
  { id: 'canvas', label: 'Canvas' },
  { id: 'images', label: 'Images' },
  { id: 'video', label: 'Video' },
  { id: 'code', label: 'Code interpreter' },
];
