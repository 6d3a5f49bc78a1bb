import { expect } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
let built: Promise<string> | undefined;

/** Build the executable once per test run (bun test runs every file in one process) and share it. */
export function buildBinaryOnce(): Promise<string> {
  return (built ??= (async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'parley-bin-')), 'parley');
    const build = Bun.spawn([process.execPath, 'run', 'scripts/build.ts', '--outfile', out], { cwd: root, stdout: 'pipe', stderr: 'pipe' });
    const code = await build.exited;
    if (code !== 0) expect(await new Response(build.stderr).text()).toBe('');
    expect(code).toBe(0);
    return out;
  })());
}
