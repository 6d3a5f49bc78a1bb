import type { AiTool, CodeFile, CodeLanguage } from '../ai/ai.types';
import type { AppDeps } from '../deps';
import { AppError } from '../http/errors';
import { addFile, writeTemp } from '../files/add-file';
import { findBlob, listAttachedFiles } from '../files/file.store';
import type { ToolSource } from '../tools/tool.types';
import type { SandboxFile } from './sandbox.protocol';
import { DATA_DIR } from './sandbox.protocol';
import { pyodideDir } from './pyodide-dir';
import { SandboxError, type RunResult } from './sandbox';

/**
 * The code interpreter, to the registry (src/tools/): source `code`, one tool per language. Off
 * until an admin turns it on in Admin → Tools (each running sandbox costs a child process's
 * memory); PARLEY_CODE_INTERPRETER=true makes it on where the admin has not said.
 */
export const codeToolSource: ToolSource = {
  id: 'code',
  label: 'Code interpreter',
  priority: 55,
  enabledByDefault: (config) => config.codeInterpreter,
  async status(deps) {
    const found = pyodideDir(deps.config.pyodideDir);
    return {
      ...('missing' in found ? { unavailable: `The Python runtime is not installed: ${found.missing}. To fix: ${found.fix}.` } : {}),
      note: `Each running sandbox is a child process of about 170 MB; at most ${deps.config.codeMaxSandboxes} run at once (PARLEY_CODE_MAX_SANDBOXES).`,
    };
  },
  async tools(turn) {
    // Without its runtime every call would fail: the model is better off not knowing the tools
    // (JavaScript runs in Python's sandbox, so it goes too).
    if ('missing' in pyodideDir(turn.deps.config.pyodideDir)) return [];
    const ctx = { userId: turn.user.id, conversationId: turn.conversationId, responseId: turn.responseId, signal: turn.signal };
    return [runCodeTool(turn.deps, ctx, 'python'), runCodeTool(turn.deps, ctx, 'javascript')];
  },
};

/** What the model reads of each language's tool. */
const LANGUAGES: Record<CodeLanguage, { name: string; description: string; label: string }> = {
  python: {
    name: 'run_python',
    label: 'Python',
    description: `Run Python 3 code (the standard library only, no network) and get what it prints and the value of its last expression. Files attached to the conversation are in ${DATA_DIR}; files the code writes there are given to the user. Variables stay between calls within one answer.`,
  },
  javascript: {
    name: 'run_javascript',
    label: 'JavaScript',
    description: `Run JavaScript (ES2023, no modules, network or timers) and get what console.log prints and the value of its last expression. Files attached to the conversation are in ${DATA_DIR}: read them with fs.readFile(path) (text; fs.readFile(path, null) for bytes), list them with fs.listdir(); files written there with fs.writeFile(path, data) are given to the user. Variables stay between calls within one answer.`,
  },
};

/**
 * `run_python`, `run_javascript`: the model runs code in a sandbox of the turn's own
 * (docs/code-interpreter.md), both languages in the same one. One tool per language with one
 * argument, since small models call a tool of one string reliably and mix up a `language`
 * field. A failure (the code's exception, a limit passed) is the call's output and the
 * `.completed` event's `error`, never the turn's end.
 */
export function runCodeTool(deps: AppDeps, ctx: { userId: string; conversationId: string; responseId: string; signal?: AbortSignal }, language: CodeLanguage): AiTool {
  const { name, label, description } = LANGUAGES[language];
  return {
    name,
    description,
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', description: `The ${label} code to run` } },
      required: ['code'],
    },
    async run(args, emit, callId, callKey) {
      const code = typeof args.code === 'string' ? args.code : '';
      if (!code.trim()) return 'Nothing ran: the code is empty.';
      emit({ type: 'code_interpreter.in_progress', itemId: callId, language, code });
      let result: RunResult;
      let restarted = false;
      try {
        ({ result, restarted } = await deps.sandboxes.run(ctx.responseId, code, () => turnFiles(deps, ctx.conversationId), ctx.signal, language));
      } catch (err) {
        if (!(err instanceof SandboxError)) throw err;
        result = { output: '', error: err.message, files: [], notes: [] };
      }
      const kept = await keepFiles(deps, ctx.userId, result, `code:${ctx.responseId}:${callKey}`);
      emit({ type: 'code_interpreter.completed', itemId: callId, language, output: result.output, ...(result.error ? { error: result.error } : {}), files: kept });
      return toolOutput(result, kept, restarted);
    },
  };
}

/** The files attached to the conversation, as the sandbox takes them. */
async function turnFiles(deps: AppDeps, conversationId: string): Promise<SandboxFile[]> {
  const rows = await deps.store.read((tx) => listAttachedFiles(tx, conversationId));
  const out: SandboxFile[] = [];
  let total = 0;
  const names = new Set<string>();
  for (const f of rows) {
    if (names.has(f.filename) || total + f.size > deps.config.codeScratchMb * 1024 * 1024) continue;
    const blob = await deps.store.read((tx) => findBlob(tx, f.sha256));
    if (!blob) continue;
    names.add(f.filename);
    total += f.size;
    out.push({ name: f.filename, data: Buffer.from(await deps.files.get(blob.key).bytes()).toString('base64') });
  }
  return out;
}

/**
 * What the code wrote, kept as the user's files (`generated`), like an upload: sniffed, within
 * their quota. Each is kept once per call and name (`origin`): a restart after they were kept
 * and before the call's output was recorded runs the call again, which finds them.
 */
async function keepFiles(deps: AppDeps, userId: string, result: RunResult, origin: string): Promise<CodeFile[]> {
  const kept: CodeFile[] = [];
  for (const f of result.files) {
    try {
      const temp = await writeTemp(deps, f.bytes);
      const row = await addFile(deps, userId, { tempPath: temp.path, size: temp.size, sha256: temp.sha256, filename: f.name, head: f.bytes.subarray(0, 4096) }, 'generated', origin);
      kept.push({ fileId: row.id, filename: row.filename, contentType: row.mimeType, size: row.size });
    } catch (err) {
      // Parley's own words (a kind it does not keep, the quota full): safe to show.
      if (!(err instanceof AppError)) throw err;
      result.notes.push(`${f.name} was not kept: ${err.message}`);
    }
  }
  return kept;
}

function toolOutput(result: RunResult, kept: CodeFile[], restarted: boolean): string {
  const parts: string[] = [];
  if (restarted) parts.push('(The interpreter was started afresh: names defined by earlier calls are gone.)');
  parts.push(result.output ? `Output:\n${result.output}` : 'The code printed nothing.');
  if (result.error) parts.push(`Error:\n${result.error}`);
  if (kept.length) parts.push(`Files given to the user: ${kept.map((f) => `${f.filename} (file ${f.fileId}, ${f.contentType}, ${f.size} bytes)`).join('; ')}.`);
  parts.push(...result.notes);
  return parts.join('\n\n');
}
