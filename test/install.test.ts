import { describe, expect, test } from 'bun:test';
import { chmodSync, copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from './build-binary';

const root = new URL('..', import.meta.url).pathname;

function install(args: string[]) {
  const p = Bun.spawnSync(['bash', join(root, 'install.sh'), ...args], { stdout: 'pipe', stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** `parley doctor`'s code interpreter line, the interpreter on. */
function python(bin: string, t: string): { status: string; detail: string; fix?: string } {
  const p = Bun.spawnSync([bin, 'doctor', '--json', '--data-dir', join(t, 'doctor-data')], { env: { PATH: process.env.PATH ?? '', PARLEY_CODE_INTERPRETER: 'true' }, stdout: 'pipe' });
  return JSON.parse(p.stdout.toString()).checks.find((c: { name: string }) => c.name === 'code interpreter');
}

describe('install.sh', () => {
  test('installs a given binary, a data dir and a rendered unit; running it twice is harmless', async () => {
    const binary = await buildBinaryOnce();
    const t = mkdtempSync(join(tmpdir(), 'parley-install-'));
    const args = ['--binary', binary, '--prefix', join(t, 'usr'), '--data-dir', join(t, 'data'), '--systemd', '--systemd-dir', join(t, 'systemd'), '--env-file', join(t, 'etc/parley.env'), '--user', 'parleysvc'];

    const first = install(args);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    const bin = join(t, 'usr/bin/parley');
    expect(statSync(bin).mode & 0o777).toBe(0o755);
    expect(Bun.spawnSync([bin, '--version']).stdout.toString()).toMatch(/^parley \d+\.\d+\.\d+ \(commit \w+\)\n$/);
    expect(statSync(join(t, 'data')).isDirectory()).toBe(true);
    expect(statSync(join(t, 'data')).mode & 0o777).toBe(0o700);
    expect(first.out).toContain('Next steps:');
    expect(first.out).toContain('systemctl enable --now parley');
    // Pyodide beside the installed binary, where it looks (docs/code-interpreter.md).
    expect(first.out).toContain(`installed ${join(t, 'usr/bin/pyodide')}`);
    expect(python(bin, t)).toMatchObject({ status: expect.stringMatching(/^(ok|warn)$/), detail: expect.stringContaining(`in ${join(t, 'usr/bin/pyodide')}, beside the executable`) });

    const unitFile = join(t, 'systemd/parley.service');
    const unit = readFileSync(unitFile, 'utf8');
    const directives = Object.fromEntries(
      unit.split('\n').filter((l) => /^\w+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
    expect(directives).toMatchObject({
      User: 'parleysvc',
      Group: 'parleysvc',
      ExecStart: `${bin} serve --data-dir ${join(t, 'data')}`,
      EnvironmentFile: `-${join(t, 'etc/parley.env')}`,
      Restart: 'on-failure',
      NoNewPrivileges: 'true',
      ProtectSystem: 'strict',
      ReadWritePaths: join(t, 'data'),
      WantedBy: 'multi-user.target',
    });
    expect(unit).not.toContain('@');
    const env = readFileSync(join(t, 'etc/parley.env'), 'utf8');
    expect(env).toContain('PARLEY_HOST=127.0.0.1');
    expect(statSync(join(t, 'etc/parley.env')).mode & 0o777).toBe(0o640);

    // The unit is valid systemd syntax (where systemd's own checker is installed).
    if (Bun.which('systemd-analyze')) {
      const verify = Bun.spawnSync(['systemd-analyze', 'verify', '--man=no', unitFile], { stderr: 'pipe' });
      expect(verify.stderr.toString()).toBe('');
    }

    // The self-hoster edits the settings and adds data; a second run keeps both.
    writeFileSync(join(t, 'etc/parley.env'), 'PARLEY_PORT=9999\n');
    writeFileSync(join(t, 'data/parley.db'), 'precious');
    // An older Parley's Pyodide left beside the binary: doctor names it; the next install replaces it.
    const asm = join(t, 'usr/bin/pyodide/pyodide.asm.mjs');
    writeFileSync(asm, readFileSync(asm, 'latin1').replace(/API\.version="[^"]+"/, 'API.version="0.26.4"'), 'latin1');
    expect(python(bin, t)).toMatchObject({ status: 'fail', detail: expect.stringContaining('holds Pyodide 0.26.4; this Parley needs'), fix: expect.stringContaining('run install.sh again') });
    const second = install(args);
    expect(second.code).toBe(0);
    expect(second.out).toContain('unchanged');
    expect(second.out).toContain('kept your settings');
    expect(readFileSync(unitFile, 'utf8')).toBe(unit);
    expect(readFileSync(join(t, 'etc/parley.env'), 'utf8')).toBe('PARLEY_PORT=9999\n');
    expect(readFileSync(join(t, 'data/parley.db'), 'utf8')).toBe('precious');
    expect(existsSync(join(t, 'usr/bin/.parley.new'))).toBe(false);
    expect(python(bin, t).status).toMatch(/^(ok|warn)$/);
    expect(readdirSync(join(t, 'usr/bin')).sort()).toEqual(['parley', 'pyodide']);
  }, 60_000);

  test('a binary with no pyodide directory beside it installs with a note; doctor says where Pyodide was looked for', async () => {
    const t = mkdtempSync(join(tmpdir(), 'parley-install-alone-'));
    copyFileSync(await buildBinaryOnce(), join(t, 'parley'));
    chmodSync(join(t, 'parley'), 0o755);
    const r = install(['--binary', join(t, 'parley'), '--prefix', join(t, 'usr')]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`note: no pyodide directory beside ${join(t, 'parley')}: the code interpreter (off by default) will lack Python`);
    expect(python(join(t, 'usr/bin/parley'), t)).toMatchObject({
      status: 'fail',
      detail: `Pyodide is not installed in ${join(t, 'usr/bin/pyodide')} (beside the executable): run_python fails until it is there`,
    });
  }, 60_000);

  test('refuses what it cannot do, with a reason', () => {
    const t = mkdtempSync(join(tmpdir(), 'parley-install-bad-'));
    const notBinary = join(t, 'parley');
    writeFileSync(notBinary, 'not an executable');
    const r = install(['--binary', notBinary, '--prefix', join(t, 'usr')]);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('does not run here');
    expect(existsSync(join(t, 'usr/bin/parley'))).toBe(false);
    expect(install(['--binary', join(t, 'missing')]).err).toContain('no such file');
    expect(install(['--frobnicate']).code).toBe(2);
    expect(install(['--prefix']).err).toContain('--prefix needs a value');
  }, 30_000);
});

// The real --systemd path (useradd, chown, /etc) on a scratch copy of the system: a private mount
// namespace with an overlay on /etc and empty /usr/local and /var/lib, so the machine itself is
// left alone. Needs root and mount rights; elsewhere (most CI containers) it is skipped.
const canIsolate = process.getuid?.() === 0 && Bun.which('unshare') !== null && Bun.spawnSync(['unshare', '-m', 'true']).exitCode === 0;

describe.skipIf(!canIsolate)('install.sh --systemd as root, isolated', () => {
  test('creates the user, owns the data dir, keeps the settings private; twice is harmless', async () => {
    const binary = await buildBinaryOnce();
    const t = mkdtempSync(join(tmpdir(), 'parley-install-root-'));
    const script = `
      set -e
      mount --make-rprivate /
      mkdir -p ${t}/etc-upper ${t}/etc-work ${t}/usr-local ${t}/var-lib
      mount -t overlay overlay -o lowerdir=/etc,upperdir=${t}/etc-upper,workdir=${t}/etc-work /etc
      mount --bind ${t}/usr-local /usr/local
      mount --bind ${t}/var-lib /var/lib
      bash ${join(root, 'install.sh')} --binary ${binary} --systemd --user parleytest >/dev/null
      bash ${join(root, 'install.sh')} --binary ${binary} --systemd --user parleytest >/dev/null
      id -u parleytest >/dev/null
      stat -c '%U:%G %a' /var/lib/parley /etc/parley/parley.env
      grep -c '^parleytest:' /etc/passwd
      runuser -u parleytest -- /usr/local/bin/parley migrate --data-dir /var/lib/parley >/dev/null
      runuser -u parleytest -- /usr/local/bin/parley doctor --data-dir /var/lib/parley --json
    `;
    const p = Bun.spawnSync(['unshare', '-m', 'bash', '-c', script], { stdout: 'pipe', stderr: 'pipe' });
    expect(p.stderr.toString()).toBe('');
    expect(p.exitCode).toBe(0);
    const [owners, envFile, users, doctor] = p.stdout.toString().trim().split('\n');
    expect(owners).toBe('parleytest:parleytest 700');
    expect(envFile).toBe('root:parleytest 640');
    expect(users).toBe('1');
    expect(JSON.parse(doctor!).ok).toBe(true);
    // The service's data dir and database are private: doctor has no warning about them.
    expect(JSON.parse(doctor!).checks.find((c: { name: string }) => c.name === 'permissions')).toMatchObject({ status: 'ok' });
    // Nothing leaked out of the namespace.
    expect(Bun.spawnSync(['id', '-u', 'parleytest']).exitCode).not.toBe(0);
  }, 60_000);
});
