import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import { chmodSync, chownSync, constants, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDataDir } from '../src/db/connection';
import { migrate } from '../src/db/migrate';
import { migrations } from '../src/db/migrations';
import { backupFile, usedBytes } from '../src/db/backup';
import { aiModelsUrl, probeAi, probeSearxng } from '../src/ops/probes';
import { checkDatabase } from '../src/ops/checks';
import { readEnvFile } from '../cli/env-file';
import { createProgress } from '../cli/progress';
import { startProviderEndpoints } from './fakes/provider-endpoints';
import pkg from '../package.json' with { type: 'json' };
import { sqliteOnly } from './helpers';

const root = new URL('..', import.meta.url).pathname;
// These tests spawn the CLI several times each; give a busy machine room.
const SLOW = 30_000;

function parley(args: string[], env: Record<string, string> = {}) {
  const p = Bun.spawnSync([process.execPath, join(root, 'cli/main.ts'), ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

const tmp = (name: string) => mkdtempSync(join(tmpdir(), `parley-ops-${name}-`));
const byName = (checks: any[], name: string) => checks.find((c) => c.name === name);

describe('parley --version', () => {
  test('from source: the package version and commit "dev"', () => {
    const r = parley(['--version']);
    expect(r.code).toBe(0);
    expect(r.out.trim()).toBe(`parley ${pkg.version} (commit dev)`);
  }, SLOW);
});

// Several of doctor's checks are of a data directory's SQLite file (its mode, owner, corruption,
// migrations): those tests are SQLite-only.
describe('parley doctor', () => {
  sqliteOnly('a good data dir: no failures, exit 0', () => {
    const dir = tmp('good');
    expect(parley(['migrate', '--data-dir', dir]).code).toBe(0);
    const r = parley(['doctor', '--json', '--data-dir', dir]);
    expect(r.code).toBe(0);
    const { ok, checks } = JSON.parse(r.out);
    expect(ok).toBe(true);
    expect(checks.map((c: any) => [c.name, c.status])).toEqual([
      ['config', 'ok'], ['data directory', 'ok'], ['database', 'ok'], ['migrations', 'ok'], ['permissions', 'ok'], ['image codec', 'ok'],
      // No AI server: each line about one is skipped; the sealing key's says where it will be.
      // The code interpreter: off by default, Python found.
      ...checks.slice(6).map((c: any) => [c.name, c.name === 'secret key' || c.name === 'code interpreter' ? 'ok' : 'skip']),
    ]);
    const human = parley(['doctor', '--data-dir', dir]);
    expect(human.out).toContain('no problems found');
    const exposed = parley(['doctor', '--json', '--data-dir', dir], { PARLEY_HOST: '0.0.0.0' });
    expect(exposed.code).toBe(0); // a warning, not a failure
    expect(byName(JSON.parse(exposed.out).checks, 'config')).toMatchObject({ status: 'warn', detail: 'listening on 0.0.0.0 with PARLEY_COOKIE_SECURE=false' });
    // Both risks at once: both said, not only the first.
    const both = parley(['doctor', '--json', '--data-dir', dir], { PARLEY_HOST: '0.0.0.0', PARLEY_ENV: 'development' });
    expect(byName(JSON.parse(both.out).checks, 'config').detail).toBe(
      'PARLEY_ENV=development enables test-only operations (e.g. credits/grantAdReward); listening on 0.0.0.0 with PARLEY_COOKIE_SECURE=false',
    );
  }, SLOW);

  test('--env-file: doctor checks the settings the service runs with; the environment wins; a bad file is reported', () => {
    const dir = tmp('envfile');
    expect(parley(['migrate', '--data-dir', dir]).code).toBe(0);
    const file = join(dir, 'parley.env');
    writeFileSync(file, '# as install.sh writes it\nPARLEY_HOST=0.0.0.0\n\n; a comment\nPARLEY_PORT="9191"\nPARLEY_COOKIE_SECURE=\n');
    const config = (env: Record<string, string> = {}) =>
      byName(JSON.parse(parley(['doctor', '--json', '--data-dir', dir, '--env-file', file], env).out).checks, 'config');
    expect(config()).toMatchObject({ status: 'warn', detail: 'listening on 0.0.0.0 with PARLEY_COOKIE_SECURE=false' });
    expect(config({ PARLEY_HOST: '127.0.0.1' })).toMatchObject({ status: 'ok', detail: 'listening on 127.0.0.1:9191, env production' });
    // An empty variable in the shell is no value: it does not hide the file's.
    expect(config({ PARLEY_HOST: '127.0.0.1', PARLEY_PORT: '' })).toMatchObject({ detail: 'listening on 127.0.0.1:9191, env production' });
    // A line systemd would skip is skipped and reported, not fatal; the checks still run.
    writeFileSync(file, 'PARLEY_HOST=0.0.0.0\nthis is not a setting\n');
    const odd = parley(['doctor', '--json', '--data-dir', dir, '--env-file', file]);
    expect(odd.err).toContain(`${file}:2: not a KEY=value line, ignored`);
    expect(byName(JSON.parse(odd.out).checks, 'config')).toMatchObject({ status: 'warn' });
    // An unreadable file: doctor reports it as the config check and runs the others; other commands stop.
    const missing = join(dir, 'nope.env');
    const doc = parley(['doctor', '--json', '--data-dir', dir, '--env-file', missing]);
    expect(doc.code).toBe(1);
    const checks = JSON.parse(doc.out).checks;
    expect(byName(checks, 'config')).toMatchObject({ status: 'fail' });
    expect(byName(checks, 'config').detail).toContain('cannot read --env-file');
    expect(byName(checks, 'database')).toMatchObject({ status: 'ok' });
    const list = parley(['user', 'list', '--data-dir', dir, '--env-file', missing]);
    expect(list.code).toBe(2);
    expect(list.err).toContain('cannot read --env-file');
  }, SLOW);

  test('env files are read as systemd reads them: quotes, escapes, continuation lines', () => {
    const dir = tmp('envfile-syntax');
    const file = join(dir, 'parley.env');
    writeFileSync(
      file,
      [
        'A=plain value  ',
        `B='single \\ "kept"'`,
        'C="double \\"escaped\\" \\\\ \\$HOME"',
        'D=long\\',
        'er',
        'E = spaced',
        'F-G=not a name',
        '  # indented comment',
      ].join('\n'),
    );
    const { env, ignored } = readEnvFile(file);
    expect(env).toEqual({ A: 'plain value', B: 'single \\ "kept"', C: 'double "escaped" \\ $HOME', D: 'longer', E: 'spaced' });
    expect(ignored).toEqual([`${file}:7: not a KEY=value line, ignored`]);
  });

  sqliteOnly('a database the service user cannot write (made by a root admin command) fails, with the chown', () => {
    const dir = tmp('readonly');
    expect(parley(['migrate', '--data-dir', dir]).code).toBe(0);
    const file = join(dir, 'parley.db');
    writeFileSync(`${file}-wal`, ''); // as a running server leaves it
    // The permission check as another user would get it: the database and its WAL are root's.
    const asServiceUser = (f: string, mode: number) => {
      if (mode & constants.W_OK && (f === file || f === `${file}-wal`)) throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
    };
    const [db] = checkDatabase(dir, asServiceUser);
    expect(db).toMatchObject({ status: 'fail', detail: `not writable by this user: ${file}, ${file}-wal` });
    expect(db!.fix).toContain(`chown parley:parley ${file} ${file}-wal`);
    expect(checkDatabase(dir)[0]).toMatchObject({ status: 'ok' });
  });

  // The same through the CLI as a real other user, where one can run it (root, runuser, and a
  // checkout and Bun that user may read and run).
  const asOther =
    process.getuid?.() === 0 &&
    Bun.which('runuser') !== null &&
    Bun.spawnSync(['runuser', '-u', 'nobody', '--', process.execPath, '--version']).exitCode === 0 &&
    Bun.spawnSync(['runuser', '-u', 'nobody', '--', 'test', '-r', join(root, 'cli/main.ts')]).exitCode === 0;
  (asOther ? sqliteOnly : test.skip)('doctor run as the service user reports the root-owned database', () => {
    // Under /tmp itself: the test run's own temporary directory is closed to other users.
    const dir = mkdtempSync('/tmp/parley-ops-readonly-');
    try {
      chmodSync(dir, 0o755);
      const data = join(dir, 'data');
      expect(parley(['migrate', '--data-dir', data]).code).toBe(0); // as root: the file is root's
      chmodSync(join(data, 'parley.db'), 0o644); // readable by others whatever the umask
      const nobody = Number(Bun.spawnSync(['id', '-u', 'nobody']).stdout.toString());
      chownSync(data, nobody, nobody); // the directory is the service user's, the database still root's
      const r = Bun.spawnSync(['runuser', '-u', 'nobody', '--', process.execPath, join(root, 'cli/main.ts'), 'doctor', '--json', '--data-dir', data], {
        env: { PATH: process.env.PATH ?? '' },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      expect({ code: r.exitCode, err: r.stderr.toString() }).toEqual({ code: 1, err: '' });
      const checks = JSON.parse(r.stdout.toString()).checks;
      expect(byName(checks, 'data directory')).toMatchObject({ status: 'ok' });
      expect(byName(checks, 'database')).toMatchObject({ status: 'fail', detail: `not writable by this user: ${join(data, 'parley.db')}` });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, SLOW);

  sqliteOnly('a corrupt database file fails with a fix, exit 1', () => {
    const dir = tmp('corrupt');
    writeFileSync(join(dir, 'parley.db'), 'not a database; '.repeat(512));
    const r = parley(['doctor', '--data-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/FAIL\s+database\s+.*file is not a database/);
    expect(r.out).toContain('fix: restore the latest backup');
  }, SLOW);

  sqliteOnly('pending migrations warn; migrations of a newer binary fail', () => {
    const dir = tmp('pending');
    const db = openDataDir(dir);
    migrate(db.$client);
    db.$client.exec("DELETE FROM _parley_migrations WHERE tag = '0000_foundation'");
    db.$client.close();
    let checks = JSON.parse(parley(['doctor', '--json', '--data-dir', dir]).out).checks;
    expect(byName(checks, 'migrations')).toMatchObject({ status: 'warn', detail: '1 pending: 0000_foundation' });
    expect(byName(checks, 'migrations').fix).toContain('parley migrate');

    const db2 = openDataDir(dir);
    db2.$client.exec("INSERT INTO _parley_migrations VALUES ('0000_foundation', 1), ('9999_from_the_future', 2)");
    db2.$client.close();
    const r = parley(['doctor', '--json', '--data-dir', dir]);
    expect(r.code).toBe(1);
    checks = JSON.parse(r.out).checks;
    expect(byName(checks, 'migrations')).toMatchObject({ status: 'fail' });
    expect(byName(checks, 'migrations').detail).toContain('9999_from_the_future');
  }, SLOW);

  test('a missing data dir and a bad setting are both reported; doctor creates nothing', () => {
    const dir = join(tmp('missing'), 'nope');
    const r = parley(['doctor', '--json', '--data-dir', dir], { PARLEY_PORT: 'eighty' });
    expect(r.code).toBe(1);
    const { checks } = JSON.parse(r.out);
    expect(byName(checks, 'config')).toMatchObject({ status: 'fail' });
    expect(byName(checks, 'config').detail).toContain('PARLEY_PORT');
    expect(byName(checks, 'data directory').status).toBe('fail');
    expect(existsSync(dir)).toBe(false);
  }, SLOW);
});

describe('provider probes', () => {
  test('doctor probes the providers the settings name', async () => {
    const ai = startProviderEndpoints({ apiKey: 'sk-local', models: ['qwen2.5:7b'] });
    const searx = startProviderEndpoints({ searxJson: false });
    try {
      const dir = tmp('providers');
      // Async spawn: the fakes live in this process and must keep answering while doctor runs.
      const p = Bun.spawn([process.execPath, join(root, 'cli/main.ts'), 'doctor', '--json', '--data-dir', dir], {
        env: {
          PATH: process.env.PATH ?? '',
          PARLEY_AI_PROVIDER: 'openai-chat',
          PARLEY_AI_BASE_URL: `${ai.url}/v1`,
          PARLEY_AI_API_KEY: 'sk-local',
          PARLEY_AI_MODEL: 'qwen2.5:7b',
          PARLEY_RESEARCH_MODEL: 'qwen2.5:7b',
          PARLEY_SEARCH_PROVIDER: 'searxng',
          PARLEY_SEARXNG_URL: searx.url,
        },
        stdout: 'pipe',
      });
      const [code, out] = await Promise.all([p.exited, new Response(p.stdout).text()]);
      const { checks } = JSON.parse(out);
      // No database yet (nothing seeded): the servers the settings name are probed as they are.
      expect(byName(checks, 'AI provider')).toEqual({ name: 'AI provider', status: 'ok', detail: `${ai.url}/v1/models reachable (1 model)` });
      expect(byName(checks, 'web search')).toMatchObject({ status: 'fail', detail: `${searx.url}/search?q=parley&format=json refused format=json (HTTP 403)` });
      expect(code).toBe(1);
    } finally {
      ai.stop();
      searx.stop();
    }
  }, SLOW);

  test('AI: reachable, wrong key, missing model, unreachable, off', async () => {
    const fake = startProviderEndpoints({ apiKey: 'sk-good', models: ['llama3.2:3b', 'qwen2.5:7b'] });
    try {
      const base = { provider: 'openai-chat', baseUrl: `${fake.url}/v1/`, apiKey: 'sk-good', models: ['qwen2.5:7b'] };
      expect(await probeAi(base)).toMatchObject({ status: 'ok', detail: `${fake.url}/v1/models reachable (2 models)` });
      expect(await probeAi({ ...base, apiKey: 'sk-bad' })).toMatchObject({ status: 'fail', fix: 'set a valid PARLEY_AI_API_KEY' });
      const missing = await probeAi({ ...base, models: ['gpt-4o'] });
      expect(missing.status).toBe('warn');
      expect(missing.fix).toContain('llama3.2:3b');
      expect((await probeAi({ ...base, baseUrl: fake.url })).status).toBe('warn'); // /models is 404 without /v1
      expect((await probeAi({ ...base, provider: 'none' })).status).toBe('skip');
      const empty = startProviderEndpoints({ apiKey: 'sk-good', models: [] }); // an Ollama with nothing pulled
      // A 200 that is no model list: a proxy's or a login page.
      const page = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('<html>Sign in</html>', { headers: { 'content-type': 'text/html' } }) });
      try {
        expect(await probeAi({ ...base, baseUrl: `${empty.url}/v1` })).toMatchObject({ status: 'warn', detail: `${empty.url}/v1/models is reachable but lists no models` });
        expect(await probeAi({ ...base, baseUrl: `http://127.0.0.1:${page.port}/v1` })).toMatchObject({
          status: 'warn',
          detail: `http://127.0.0.1:${page.port}/v1/models answered, but not with an OpenAI-style model list`,
        });
      } finally {
        empty.stop();
        page.stop(true);
      }
      expect((await probeAi({ ...base, provider: undefined })).status).toBe('skip');
      expect(aiModelsUrl('')).toBe('https://api.openai.com/v1/models');
      expect(aiModelsUrl('http://127.0.0.1:8080/v1/')).toBe('http://127.0.0.1:8080/v1/models');
    } finally {
      fake.stop();
    }
    expect((await probeAi({ provider: 'openai-chat', baseUrl: fake.url + '/v1', models: [] })).status).toBe('fail');
  }, SLOW);

  test('SearxNG: json enabled, json refused', async () => {
    const on = startProviderEndpoints({ searxJson: true });
    const off = startProviderEndpoints({ searxJson: false });
    try {
      expect((await probeSearxng('searxng', on.url)).status).toBe('ok');
      const refused = await probeSearxng('searxng', off.url);
      expect(refused.status).toBe('fail');
      expect(refused.fix).toContain('search.formats');
      expect((await probeSearxng('none', on.url)).status).toBe('skip');
      expect((await probeSearxng('searxng', '')).status).toBe('fail');
    } finally {
      on.stop();
      off.stop();
    }
  }, SLOW);
});

describe('progress of long CLI work', () => {
  test('draws on a terminal, stays silent otherwise', () => {
    const written: string[] = [];
    const tty = createProgress('backing up', { isTTY: true, write: (s) => written.push(s) });
    tty.update(0.5, 'of 1.0 MB');
    tty.update(0.5, 'of 1.0 MB'); // unchanged: not redrawn
    tty.update(1);
    tty.done();
    expect(written).toEqual(['\r\x1b[Kbacking up 50% of 1.0 MB', '\r\x1b[Kbacking up 100%', '\r\x1b[K']);
    const piped: string[] = [];
    const quiet = createProgress('backing up', { isTTY: false, write: (s) => piped.push(s) });
    quiet.update(0.5);
    quiet.done();
    expect(piped).toEqual([]);
  }, SLOW);

  // Backups copy the SQLite file.
  sqliteOnly('backupFile reports growing fractions ending at 1 and writes an intact copy', async () => {
    const dir = tmp('backup');
    const db = openDataDir(dir);
    migrate(db.$client);
    db.$client.exec('CREATE TABLE filler (b BLOB)');
    const ins = db.$client.query('INSERT INTO filler VALUES (randomblob(8192))');
    db.$client.transaction(() => { for (let i = 0; i < 6000; i++) ins.run(); })();
    const size = usedBytes(db.$client);
    const seen: number[] = [];
    const target = join(dir, 'copy.db');
    await backupFile(join(dir, 'parley.db'), target, size, (f) => seen.push(f));
    db.$client.close();
    expect(seen.at(-1)).toBe(1);
    expect(seen.filter((f) => f === 1)).toHaveLength(1);
    expect(seen.every((f, i) => i === 0 || f >= seen[i - 1]!)).toBe(true);
    const copy = new Database(target, { readonly: true });
    expect((copy.query('SELECT count(*) AS n FROM filler').get() as any).n).toBe(6000);
    copy.close();
    await expect(backupFile(join(dir, 'parley.db'), target, size)).rejects.toThrow('already exists');
  }, SLOW);

  sqliteOnly('backup and migrate print nothing but their answer when not on a terminal', () => {
    const dir = tmp('quiet');
    const m = parley(['migrate', '--data-dir', dir]);
    expect(m.err).toBe('');
    expect(m.out).toBe(`applied: ${migrations.map((x) => x.tag).join(', ')}\n`);
    const b = parley(['backup', join(dir, 'b.db'), '--data-dir', dir]);
    expect(b.code).toBe(0);
    expect(b.err).toBe('');
    expect(b.out).toBe(`backup written to ${join(dir, 'b.db')}\n`);
    expect(parley(['backup', join(dir, 'x.db'), '--data-dir', join(dir, 'none')]).err).toContain('no database at');
  }, SLOW);
});
