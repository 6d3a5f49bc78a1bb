import type { Config } from '../config';
import { maskSecretsIn } from '../mask-secrets';
import { checkConfigSense, checkDataDir, checkDatabase, type Check } from './checks';
import { checkImageCodec } from './image-check';
import { checkOAuthPublicUrl } from './oauth-check';
import { probeModelFit, probeProviders } from './probes';
import { connectionChecks } from '../connections/connection-health';
import { checkSecretKey } from './secret-key-check';
import type { Connections } from '../connections/resolver';
import { checkPermissions } from './storage-checks';
import { checkPostgres } from './postgres-check';
import { checkEmbeddingsIndex } from '../files/embeddings-check';
import type { IndexState } from '../files/embeddings-index';
import { checkPython } from '../code/python-check';

export type { Check } from './checks';

/**
 * Every check of `parley doctor`, in the order a self-hoster would fix things. `config` is
 * undefined when the settings did not parse; `configError` then says why, and the checks that
 * need no settings still run against `dataDir`.
 */
export async function runDoctor(opts: DoctorInput): Promise<Check[]> {
  return (await runChecks(opts)).map(masked);
}

type DoctorInput = {
  config?: Config;
  configError?: string;
  dataDir: string;
  /** The running server's connections (admin/doctor), tested in place. */
  connections?: Connections;
  /** Or their lines, tested beforehand (the CLI, which must close its database before the file checks). */
  connectionLines?: Check[];
  /** The running server's semantic search index (admin/doctor), which `parley doctor` cannot see. */
  embeddingsIndex?: IndexState;
  /** Whether the admin's switch has the code interpreter on (admin/doctor); else PARLEY_CODE_INTERPRETER decides. */
  codeInterpreterOn?: boolean;
};

/** A check as it may be printed (CLI) or answered (admin/doctor): URLs' user info and credential parameters masked. */
const masked = (c: Check): Check => ({ ...c, detail: maskSecretsIn(c.detail), ...(c.fix ? { fix: maskSecretsIn(c.fix) } : {}) });

async function runChecks(opts: DoctorInput): Promise<Check[]> {
  const checks: Check[] = [];
  if (opts.config) checks.push(checkConfigSense(opts.config));
  else checks.push({ name: 'config', status: 'fail', detail: opts.configError ?? 'unreadable', fix: 'fix the setting named above (docs/configuration.md)' });
  // On PostgreSQL the data directory holds nothing Parley needs: its checks are the SQLite file's.
  if (!opts.config?.databaseUrl) {
    const dir = checkDataDir(opts.dataDir);
    checks.push(dir);
    if (dir.status === 'ok') checks.push(...checkDatabase(opts.dataDir), checkPermissions(opts.dataDir));
  }
  if (opts.config) checks.push(...(await checkPostgres(opts.config)));
  checks.push(await checkImageCodec());
  // With the database open: each connection (the environment's seeded among them); else the settings' servers.
  const lines = opts.connectionLines ?? (opts.connections && (await connectionChecks(opts.connections)));
  if (opts.config) checks.push(...(lines ? [...lines, ...(await probeModelFit(opts.config)), checkSecretKey(opts.config)] : await probeProviders(opts.config)));
  if (opts.config) checks.push(...checkOAuthPublicUrl(opts.config));
  const index = opts.config && checkEmbeddingsIndex(opts.config, opts.embeddingsIndex);
  if (index) checks.push(index);
  if (opts.config) checks.push(checkPython(opts.config, opts.codeInterpreterOn));
  return checks;
}

const LABEL: Record<Check['status'], string> = { ok: 'ok', warn: 'WARN', fail: 'FAIL', skip: 'skip' };

export function renderChecks(checks: Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.flatMap((c) => [
    `${LABEL[c.status].padEnd(5)} ${c.name.padEnd(width)}  ${c.detail}`,
    ...(c.fix && c.status !== 'ok' ? [`${' '.repeat(width + 8)}fix: ${c.fix}`] : []),
  ]);
  const fails = checks.filter((c) => c.status === 'fail').length;
  const warns = checks.filter((c) => c.status === 'warn').length;
  lines.push(fails ? `${fails} problem(s) to fix${warns ? `, ${warns} warning(s)` : ''}` : warns ? `no problems, ${warns} warning(s)` : 'no problems found');
  return lines.join('\n');
}
