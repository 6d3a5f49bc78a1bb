import { readFileSync } from 'node:fs';

/**
 * Settings from a file of `KEY=value` lines, as systemd's `EnvironmentFile=` reads the service's
 * (/etc/parley/parley.env): so that `parley doctor --env-file …` checks what the service runs
 * with, not the defaults. Blank lines and lines starting with `#` or `;` are skipped; a value may
 * be in single or double quotes. Throws an Error naming the file (and line) when it cannot be used.
 */
export function readEnvFile(path: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read --env-file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const env: Record<string, string> = {};
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) throw new Error(`${path}:${i + 1}: not a KEY=value line`);
    const value = m[2]!;
    const quoted = /^(["'])(.*)\1$/.exec(value);
    env[m[1]!] = quoted ? quoted[2]! : value;
  }
  return env;
}
