import { useEffect, useState } from 'preact/hooks';
import { call } from '../shared/api';

/** An assistant's knowledge files and MCP servers, as `assistants/create` and `assistants/update` take them. */
export interface ResourceChoice {
  knowledgeFileIds: string[];
  /** null: whatever its user has; []: none. */
  mcpServerIds: string[] | null;
}

export const resourceChoiceOf = (a?: Partial<ResourceChoice>): ResourceChoice => ({ knowledgeFileIds: a?.knowledgeFileIds ?? [], mcpServerIds: a?.mcpServerIds ?? null });

interface FileItem {
  id: string;
  filename: string;
}
interface ServerItem {
  id: string;
  name: string;
  shared: boolean;
}

/** How many of the caller's documents the list offers: newest first, as files/listFiles gives them. */
const FILES_SHOWN = 200;

const toggled = (ids: string[], id: string, on: boolean) => (on ? [...ids, id] : ids.filter((x) => x !== id));

/**
 * The editor's Knowledge and MCP servers fieldsets (docs/assistants.md, "Knowledge and MCP
 * servers"): the caller's documents to tick, and which servers' tools it gets. A shared
 * assistant offers the admin's servers only; files already on it that the caller does not own
 * (another admin's) are kept and counted, not listed.
 */
export function AssistantResourcesFields({ value, onChange, shared }: { value: ResourceChoice; onChange(next: ResourceChoice): void; shared: boolean }) {
  const [files, setFiles] = useState<FileItem[] | undefined>();
  const [servers, setServers] = useState<ServerItem[] | undefined>();
  useEffect(() => {
    // Lists that do not come leave the choice as it was: saving keeps it.
    call<{ files: FileItem[] }>('files/listFiles', { kind: 'document', limit: FILES_SHOWN }).then((r) => setFiles(r.files), () => setFiles([]));
    call<{ servers: ServerItem[] }>('mcp/listServers').then((r) => setServers(r.servers), () => setServers([]));
  }, []);
  const offeredServers = (servers ?? []).filter((s) => !shared || s.shared);
  const others = files ? value.knowledgeFileIds.filter((id) => !files.some((f) => f.id === id)).length : 0;
  // "These servers" with none ticked yet is still that choice on screen (it saves as none).
  const [mode, setMode] = useState(value.mcpServerIds === null ? 'all' : value.mcpServerIds.length ? 'some' : 'none');
  const choose = (m: string) => {
    setMode(m);
    onChange({ ...value, mcpServerIds: m === 'all' ? null : m === 'none' ? [] : (value.mcpServerIds ?? []) });
  };

  return (
    <>
      <fieldset>
        <legend>Knowledge</legend>
        <p class="hint">Documents it always searches, even for users who have none. They read them through it only.</p>
        {files === undefined && <p class="hint">Loading your documents…</p>}
        {files?.length === 0 && <p class="hint">No documents yet: upload some on the Files page.</p>}
        {files?.map((f) => (
          <label class="check" key={f.id}>
            <input type="checkbox" checked={value.knowledgeFileIds.includes(f.id)} onChange={(e) => onChange({ ...value, knowledgeFileIds: toggled(value.knowledgeFileIds, f.id, e.currentTarget.checked) })} />
            {f.filename}
          </label>
        ))}
        {others > 0 && <p class="hint">{others === 1 ? 'One more file, not yours, stays.' : `${others} more files, not yours, stay.`}</p>}
      </fieldset>
      <fieldset>
        <legend>MCP servers</legend>
        <label>
          Servers whose tools it gets
          <select value={mode} onChange={(e) => choose(e.currentTarget.value)}>
            <option value="all">Every server its user has</option>
            <option value="none">None</option>
            <option value="some">These servers</option>
          </select>
        </label>
        {mode === 'some' &&
          offeredServers.map((s) => (
            <label class="check" key={s.id}>
              <input type="checkbox" checked={!!value.mcpServerIds?.includes(s.id)} onChange={(e) => onChange({ ...value, mcpServerIds: toggled(value.mcpServerIds ?? [], s.id, e.currentTarget.checked) })} />
              {s.name}
            </label>
          ))}
        {servers?.length === 0 && <p class="hint">No MCP servers yet.</p>}
      </fieldset>
    </>
  );
}
