import { readFileSync } from 'node:fs';

export interface EnvFile {
  env: Record<string, string>;
  /** Lines skipped, as systemd skips them (it logs "ignoring"): `<file>:<line>: why`. */
  ignored: string[];
}

/**
 * Settings from a file read the way systemd's `EnvironmentFile=` reads the service's
 * (/etc/parley/parley.env), so that `parley doctor --env-file …` checks what the service runs
 * with, not the defaults:
 * - blank lines and lines starting with `#` or `;` are comments;
 * - `KEY=value`, the key a shell name; a line that is not one is skipped (and reported), not fatal;
 * - a value may be in single quotes (taken as is) or double quotes (`\"`, `\\`, `\$` and `` \` ``
 *   escaped); unquoted, a backslash takes the next character as is and surrounding space goes;
 * - a backslash at the end of a line continues the value on the next one.
 * Throws an Error naming the file when it cannot be read.
 */
export function readEnvFile(path: string): EnvFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read --env-file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const env: Record<string, string> = {};
  const ignored: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const at = i + 1;
    let line = lines[i]!.replace(/\r$/, '');
    // Continuation lines: an odd number of trailing backslashes joins the next line.
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!.replace(/\r$/, '');
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#') || trimmed.startsWith(';')) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/s.exec(trimmed);
    if (!m) {
      ignored.push(`${path}:${at}: not a KEY=value line, ignored`);
      continue;
    }
    env[m[1]!] = unquote(m[2]!);
  }
  return { env, ignored };
}

function unquote(raw: string): string {
  if (raw.length >= 2 && raw.startsWith("'") && raw.endsWith("'")) return raw.slice(1, -1);
  if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) return raw.slice(1, -1).replace(/\\(["\\$`])/g, '$1');
  return raw.replace(/\\(.)/gs, '$1').trim();
}
