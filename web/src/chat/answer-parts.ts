/**
 * What an answer shows besides its text, built the same way from its live events (turn.ts) and
 * from the parts its stored item keeps (docs/research.md, "What is stored for the conversation"):
 * the model, the reasoning, what the assistant did (read a document, searched the user's files,
 * saved a memory, searched the web), the documents it read (its citations), the images and
 * videos it made, the code it ran and the canvases it wrote.
 */
export interface Activity {
  /** The tool call's id (`itemId`), so its completion finds it. */
  id: string;
  kind: 'read_file' | 'file_search' | 'memory' | 'web_search' | 'history' | 'canvas' | 'image' | 'approval';
  state: 'running' | 'done' | 'failed';
  /** What was done, in words ("Read report.pdf"). */
  label: string;
  detail?: string;
}
export interface CitedDocument {
  fileId: string;
  filename: string;
}
export interface MadeImage {
  url: string;
  fileId?: string;
}
/** A `generate_video` call (docs/video.md): waiting for the video, made, or why not. */
export interface MadeVideo {
  id: string;
  state: 'pending' | 'done' | 'failed';
  prompt?: string;
  url?: string;
  fileId?: string;
  error?: string;
}
/** A file a code run wrote, kept as the user's file. */
export interface CodeFile {
  fileId: string;
  filename: string;
  contentType: string;
  size: number;
}
/** A run of the code interpreter (docs/code-interpreter.md): the code, then what it printed, its error and the files it wrote. */
export interface CodeRun {
  id: string;
  state: 'running' | 'done';
  language?: string;
  code?: string;
  output?: string;
  error?: string;
  files: CodeFile[];
}
/** A call of an "ask first" tool waiting for the user's answer (docs/chat.md, "Tool approval"). */
export interface PendingApproval {
  itemId: string;
  name: string;
  label: string;
  arguments: Record<string, unknown>;
}
export interface AnswerExtras {
  model?: string;
  /** Calls waiting for the user's answer: an `approval_required` without its `approval_resolved`. */
  approvals: PendingApproval[];
  reasoning: string;
  activity: Activity[];
  documents: CitedDocument[];
  images: MadeImage[];
  videos: MadeVideo[];
  code: CodeRun[];
  canvases: string[];
}

export const emptyExtras = (): AnswerExtras => ({ reasoning: '', activity: [], documents: [], images: [], videos: [], code: [], canvases: [], approvals: [] });

const MEMORY_WORDS: Record<string, [string, string]> = {
  save: ['Saving a memory…', 'Saved a memory'],
  update: ['Updating a memory…', 'Updated a memory'],
  forget: ['Forgetting a memory…', 'Forgot a memory'],
};

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** Only Parley's own file URLs (or data: images) are shown: an image URL a model made up must not make the browser call anywhere. */
const safeImageUrl = (url: string) => (url.startsWith('/api/files/') || url.startsWith('data:image/') ? url : undefined);

function addDocument(x: AnswerExtras, fileId: string, filename: string) {
  if (fileId && !x.documents.some((d) => d.fileId === fileId)) x.documents = [...x.documents, { fileId, filename: filename || 'a document' }];
}
function setActivity(x: AnswerExtras, a: Activity) {
  x.activity = x.activity.some((b) => b.id === a.id) ? x.activity.map((b) => (b.id === a.id ? { ...b, ...a } : b)) : [...x.activity, a];
}
/** The last activity of a kind still running: a completion event that carries no id closes it. */
const openOf = (x: AnswerExtras, kind: Activity['kind']) => [...x.activity].reverse().find((a) => a.kind === kind && a.state === 'running');

function addImages(x: AnswerExtras, images: unknown) {
  for (const img of Array.isArray(images) ? (images as { type?: string; data?: string; fileId?: string }[]) : []) {
    const url = img?.type === 'url' ? safeImageUrl(str(img.data)) : img?.type === 'base64' ? `data:image/png;base64,${str(img.data)}` : undefined;
    if (url && !x.images.some((i) => i.url === url)) x.images = [...x.images, { url, fileId: img.fileId }];
  }
}

function setVideo(x: AnswerExtras, v: MadeVideo) {
  x.videos = x.videos.some((w) => w.id === v.id) ? x.videos.map((w) => (w.id === v.id ? { ...w, ...v } : w)) : [...x.videos, v];
}
/** A run by its id; a completion without one (OpenAI's hosted tool) closes the last still running. */
function setCodeRun(x: AnswerExtras, id: string, run: Partial<CodeRun>) {
  const target = id ? x.code.find((r) => r.id === id) : [...x.code].reverse().find((r) => r.state === 'running');
  if (target) x.code = x.code.map((r) => (r === target ? { ...r, ...run } : r));
  else x.code = [...x.code, { id, state: 'running', files: [], ...run }];
}
const codeFilesOf = (files: unknown): CodeFile[] =>
  (Array.isArray(files) ? (files as Partial<CodeFile>[]) : [])
    .filter((f) => f && typeof f.fileId === 'string' && f.fileId)
    .map((f) => ({ fileId: f.fileId!, filename: str(f.filename) || 'a file', contentType: str(f.contentType), size: typeof f.size === 'number' ? f.size : 0 }));

/** One event (live, or a stored part) into the extras; returns whether it was one of theirs. */
export function applyExtra(x: AnswerExtras, data: { type: string; [k: string]: unknown }): boolean {
  const id = str(data.itemId);
  switch (data.type) {
    case 'response.created':
      if (data.model) x.model = str(data.model);
      return true;
    case 'response.model':
      x.model = str(data.model);
      return true;
    case 'reasoning_text.delta':
      x.reasoning += str(data.delta);
      return true;
    case 'reasoning_text.done':
      if (x.reasoning && !x.reasoning.endsWith('\n\n')) x.reasoning += '\n\n';
      return true;
    case 'read_file.in_progress':
      addDocument(x, str(data.fileId), str(data.filename));
      setActivity(x, { id, kind: 'read_file', state: 'running', label: `Reading ${str(data.filename) || 'a document'}…` });
      return true;
    case 'read_file.completed': {
      const open = openOf(x, 'read_file');
      if (open) setActivity(x, { ...open, state: data.success === false ? 'failed' : 'done', label: open.label.replace(/^Reading (.*)…$/, data.success === false ? 'Could not read $1' : 'Read $1'), detail: str(data.error) || undefined });
      return true;
    }
    case 'file_search.in_progress':
      setActivity(x, { id, kind: 'file_search', state: 'running', label: `Searching your files for "${str(data.query)}"…` });
      return true;
    case 'file_search.completed': {
      const results = Array.isArray(data.results) ? (data.results as { filename?: string; page?: number | null }[]) : [];
      const open = x.activity.find((a) => a.id === id) ?? openOf(x, 'file_search');
      const found = results.map((r) => `${r.filename ?? 'a document'}${r.page ? ` (page ${r.page})` : ''}`);
      if (open) setActivity(x, { ...open, state: 'done', label: open.label.replace(/^Searching (.*)…$/, 'Searched $1'), detail: found.length ? `Found in ${[...new Set(found)].join(', ')}` : 'Nothing found' });
      return true;
    }
    case 'memory.in_progress': {
      const words = MEMORY_WORDS[str(data.action)] ?? ['Using memory…', 'Used memory'];
      setActivity(x, { id, kind: 'memory', state: 'running', label: words[0] });
      return true;
    }
    case 'memory.completed': {
      const words = MEMORY_WORDS[str(data.action)] ?? ['', 'Used memory'];
      setActivity(x, { id, kind: 'memory', state: 'done', label: words[1], detail: str(data.content) || undefined });
      return true;
    }
    case 'memory.error':
      setActivity(x, { id, kind: 'memory', state: 'failed', label: 'A memory was not changed', detail: str(data.error) });
      return true;
    case 'web_search.in_progress':
      setActivity(x, { id, kind: 'web_search', state: 'running', label: `Searching the web for "${str(data.query)}"…` });
      return true;
    case 'web_search.completed': {
      const open = openOf(x, 'web_search');
      const n = Array.isArray(data.results) ? data.results.length : 0;
      if (open) setActivity(x, { ...open, state: 'done', label: open.label.replace(/^Searching (.*)…$/, 'Searched $1'), detail: `${n} ${n === 1 ? 'result' : 'results'}` });
      return true;
    }
    case 'history.in_progress':
      setActivity(x, { id, kind: 'history', state: 'running', label: `Searching your earlier conversations for "${str(data.query)}"…` });
      return true;
    case 'history.completed': {
      const open = openOf(x, 'history');
      if (open) setActivity(x, { ...open, state: 'done', label: open.label.replace(/^Searching (.*)…$/, 'Searched $1') });
      return true;
    }
    case 'generate_canvas.in_progress':
      setActivity(x, { id, kind: 'canvas', state: 'running', label: `Writing a canvas: ${str(data.topic) || 'a document'}…` });
      return true;
    case 'widget.created': {
      const open = openOf(x, 'canvas');
      if (open) setActivity(x, { ...open, state: 'done', label: open.label.replace(/^Writing (.*)…$/, 'Wrote $1') });
      if (data.widgetType === 'canvas' && !x.canvases.includes(str(data.widgetId))) x.canvases = [...x.canvases, str(data.widgetId)];
      return true;
    }
    case 'image_generation.in_progress':
    case 'edit_image.in_progress':
      setActivity(x, { id, kind: 'image', state: 'running', label: data.type === 'edit_image.in_progress' ? 'Editing an image…' : 'Making an image…' });
      return true;
    case 'image_generation.completed':
    case 'edit_image.completed': {
      const open = x.activity.find((a) => a.id === id) ?? openOf(x, 'image');
      if (open) setActivity(x, { ...open, state: 'done', label: open.label === 'Editing an image…' ? 'Edited an image' : 'Made an image' });
      addImages(x, data.images);
      return true;
    }
    case 'generate_video.in_progress':
      setVideo(x, { id, state: 'pending', prompt: str(data.prompt) || undefined });
      return true;
    case 'generate_video.completed': {
      const video = (data.video ?? {}) as { url?: unknown; fileId?: unknown };
      // Only Parley's own file URLs: a video address from elsewhere must not make the browser call anywhere.
      const url = str(video.url).startsWith('/api/files/') ? str(video.url) : undefined;
      setVideo(x, url ? { id, state: 'done', url, fileId: str(video.fileId) || undefined } : { id, state: 'failed', error: 'The video has no address on this server.' });
      return true;
    }
    case 'generate_video.error':
      setVideo(x, { id, state: 'failed', error: str(data.error) || 'The video could not be made.' });
      return true;
    case 'code_interpreter.in_progress':
      setCodeRun(x, id, { id, state: 'running', language: str(data.language) || undefined, code: str(data.code) || undefined });
      return true;
    case 'code_interpreter.completed':
      setCodeRun(x, id, {
        state: 'done',
        ...(data.language ? { language: str(data.language) } : {}),
        ...(typeof data.code === 'string' ? { code: data.code } : {}),
        output: str(data.output) || undefined,
        error: str(data.error) || undefined,
        files: codeFilesOf(data.files),
      });
      return true;
    case 'tool_call.approval_required': {
      const args = data.arguments && typeof data.arguments === 'object' ? (data.arguments as Record<string, unknown>) : {};
      if (!x.approvals.some((a) => a.itemId === id)) x.approvals = [...x.approvals, { itemId: id, name: str(data.name), label: str(data.label) || str(data.name), arguments: args }];
      return true;
    }
    case 'tool_call.approval_resolved': {
      const asked = x.approvals.find((a) => a.itemId === id);
      x.approvals = x.approvals.filter((a) => a.itemId !== id);
      const label = asked?.label ?? 'A tool';
      const approved = data.decision === 'approved';
      const words = approved
        ? `You allowed ${label}`
        : data.decidedBy === 'user'
          ? `You did not allow ${label}`
          : data.decidedBy === 'timeout'
            ? `${label} did not run: nobody answered in time`
            : `${label} did not run`;
      setActivity(x, { id: `approval:${id}`, kind: 'approval', state: approved ? 'done' : 'failed', label: words });
      return true;
    }
    case 'edit_image.error':
      setActivity(x, { id, kind: 'image', state: 'failed', label: 'The image could not be made', detail: str(data.error) });
      return true;
  }
  return false;
}

/** The extras of a stored answer, from its parts. */
export function extrasOfParts(parts: unknown[] | undefined): AnswerExtras {
  const x = emptyExtras();
  for (const p of parts ?? []) if (p && typeof p === 'object' && typeof (p as { type?: unknown }).type === 'string') applyExtra(x, p as { type: string });
  // A stored answer's tools all ended: nothing of it is still running, or waiting.
  x.approvals = [];
  x.code = x.code.map((r) => ({ ...r, state: 'done' }));
  // A video asked for whose end the answer does not keep: the turn ended without it.
  x.videos = x.videos.map((v) => (v.state === 'pending' ? { ...v, state: 'failed', error: v.error ?? 'The video was not finished.' } : v));
  x.activity = x.activity.map((a) => (a.state === 'running' ? { ...a, state: 'done', label: a.label.replace(/^(\w+)ing (.*)…$/, (_, v: string, rest: string) => `${pastOf(v)} ${rest}`) } : a));
  return x;
}
const pastOf = (verb: string) => ({ Read: 'Read', Search: 'Searched', Writ: 'Wrote', Mak: 'Made', Edit: 'Edited', Sav: 'Saved', Updat: 'Updated', Forgett: 'Forgot' })[verb] ?? verb;
