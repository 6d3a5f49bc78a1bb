import type { CodeLanguage } from '../ai/ai.types';

/**
 * What the server and a sandbox child (`parley sandbox`, sandbox-child.ts) say to each other: one
 * JSON object a line, the server on the child's stdin, the child on its stdout. Files travel
 * base64-encoded; both sides bound their sizes.
 */

/** Where the turn's files are, inside the sandbox, and where the code's files are looked for. */
export const DATA_DIR = '/mnt/data';

export interface SandboxFile {
  name: string;
  /** base64 */
  data: string;
}

export type SandboxRequest =
  /** Once, before the first run: the turn's attached files, copied into the sandbox's memory. */
  | { op: 'files'; files: SandboxFile[] }
  /** `language` absent: Python. Both languages of a turn share DATA_DIR. */
  | { op: 'run'; code: string; language?: CodeLanguage };

export type SandboxReply =
  /** The interpreter is loaded and locked down: it takes requests. */
  | { parley: 'ready' }
  | { parley: 'files' }
  | {
      parley: 'result';
      /** What the code printed, then the last expression's value; cut at the cap. */
      output: string;
      /** The exception's last lines when the code failed. */
      error?: string;
      /** Files under DATA_DIR that the run created or changed. */
      files: SandboxFile[];
      /** Why some files were not sent back (too large, too many). */
      notes: string[];
    }
  | { parley: 'fatal'; error: string };

/** Limits the server hands the child on its command line (`parley sandbox --limits '<json>'`). */
export interface SandboxLimits {
  /** Characters of output kept per run. */
  outputChars: number;
  /** Bytes the files under the sandbox's directories may hold together. */
  scratchBytes: number;
  /** Bytes one file sent back may have. */
  fileBytes: number;
  /** A directory of Pyodide packages (wheels and its pyodide-lock.json), or none. */
  packagesDir?: string;
  /** Bytes JavaScript's heap (QuickJS) may take, within the child's memory limit. */
  jsMemoryBytes: number;
  /** Seconds one run may take (PARLEY_CODE_TIMEOUT_S): JavaScript stops itself just before. */
  timeoutS: number;
}
