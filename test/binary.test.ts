import { describe, expect, setDefaultTimeout, test } from 'bun:test';

// These tests spawn processes; shared machines can be slow, and no test here asserts on time.
setDefaultTimeout(60_000);
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from './build-binary';
import { waitForListening } from '../scripts/lib/wait-for-listening';
import pkg from '../package.json' with { type: 'json' };
import { sqliteOnly } from './helpers';

const root = new URL('..', import.meta.url).pathname;

describe('the compiled binary', () => {
  // An empty data dir's SQLite file, and an online backup of it.
  sqliteOnly('builds, boots on an empty data dir, answers, and exits 0 on SIGTERM', async () => {
    const out = await buildBinaryOnce();

    const dataDir = join(mkdtempSync(join(tmpdir(), 'parley-bin-data-')), 'data');
    const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: dataDir };
    const user = Bun.spawnSync([out, 'user', 'create', '--email', 'ann@example.org'], { env });
    expect(user.exitCode).toBe(0);
    const { key } = JSON.parse(Bun.spawnSync([out, 'apikey', 'create', '--email', 'ann@example.org', '--json'], { env }).stdout.toString());

    const proc = Bun.spawn([out, 'serve', '--port', '0'], { env, stdout: 'pipe', stderr: 'pipe' });
    try {
      const url = await waitForListening(proc);
      expect((await fetch(`${url}/api/health`)).status).toBe(200);
      const prefs = await fetch(`${url}/api/preferences/get`, { method: 'POST', headers: { 'x-api-key': key } });
      expect(prefs.status).toBe(200);
      expect(await prefs.json()).toEqual({ enableMemories: false, showMemoryToolOutput: false });
      const docs = await fetch(`${url}/api/docs`);
      expect(await docs.text()).toContain('Parley API');
      // An online backup through the same binary while the server runs.
      const backup = Bun.spawnSync([out, 'backup', join(dataDir, '..', 'copy.db')], { env });
      expect(backup.exitCode).toBe(0);
      // doctor proves the embedded @napi-rs/image binding loads inside the executable.
      const doctor = Bun.spawnSync([out, 'doctor', '--json'], { env });
      const checks = JSON.parse(doctor.stdout.toString()).checks;
      expect(checks.find((c: any) => c.name === 'image codec')).toEqual({ name: 'image codec', status: 'ok', detail: `PNG → JPEG in-process (linux-${process.arch})` });
      expect(doctor.exitCode).toBe(0);
    } finally {
      proc.kill('SIGTERM');
    }
    const started = Date.now();
    expect(await proc.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  }, 60_000);

  test('--version names the package version and the commit it was built from', async () => {
    const out = await buildBinaryOnce();
    const commit = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD'], { cwd: root }).stdout.toString().trim();
    const v = Bun.spawnSync([out, '--version']);
    expect(v.stdout.toString().trim()).toBe(`parley ${pkg.version} (commit ${commit})`);
  }, 60_000);
});
