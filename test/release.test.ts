import { describe, expect, test } from 'bun:test';
import { buildBinaryOnce } from './build-binary';

const root = new URL('..', import.meta.url).pathname;

// The cross build and the emulated run live in ./scripts/release.sh (minutes); this keeps the
// smoke script itself honest against the host's binary (seconds).
describe('release tooling', () => {
  test('scripts/smoke.ts passes on the host binary', async () => {
    const binary = await buildBinaryOnce();
    const p = Bun.spawn([process.execPath, 'run', 'scripts/smoke.ts', binary], { cwd: root, stdout: 'pipe', stderr: 'pipe' });
    const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('/api/health ok');
    expect(out).toMatch(/doctor ok \(PNG → JPEG in-process \(linux-(x64|arm64)\)\)/);
    expect(out).toMatch(/doctor: Python ready \(Pyodide [\d.]+ in \S+\/pyodide, beside the executable;/);
    expect(out).toContain('stopped cleanly on SIGTERM');
  }, 60_000);

  test('scripts/build.ts refuses a target it cannot build', () => {
    const p = Bun.spawnSync([process.execPath, 'run', 'scripts/build.ts', '--target', 'bun-windows-x64', '--outfile', '/dev/null'], { cwd: root, stderr: 'pipe' });
    expect(p.exitCode).not.toBe(0);
    expect(p.stderr.toString()).toContain('unsupported target bun-windows-x64');
  }, 30_000);
});
