import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildBinaryOnce } from './build-binary';
import { waitForListening } from '../scripts/lib/wait-for-listening';
import { operations } from '../src/app';
import { loadConfig } from '../src/config';
import { bodyLimitOf } from '../src/http/operation';
import { costlyBodies } from './support/costly-json';

// Tens of megabytes go over a socket for each shape; a shared machine may be slow. No timing is asserted.
setDefaultTimeout(240_000);

const MB = 1024 * 1024;
/**
 * The bound, for default settings: ~60 MB for the idle server, plus four bodies of the largest
 * limit (27 MB each, held by Bun while they arrive: ~4 × 34 MB), plus one parse of one of them
 * (its text and its one long string, 2 × 27 MB) and the garbage of the one before, which the
 * collector has not reclaimed yet. Without the bounds, four 27 MB bodies of `[{},{},…]` take
 * gigabytes and seconds of the event loop each.
 */
const PEAK_BOUND_MB = 300;

/** VmHWM (the peak resident set since the process started) and VmRSS of a process, in MB. */
function memoryOf(pid: number): { hwm: number; rss: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
}

describe('the compiled binary: what one JSON body may cost', () => {
  test('each costly shape at the largest size its operation allows, four at once: the peak RSS stays bounded and health answers', async () => {
    const out = await buildBinaryOnce();
    const dataDir = join(mkdtempSync(join(tmpdir(), 'parley-body-cost-')), 'data');
    const env = { PATH: process.env.PATH ?? '', PARLEY_DATA_DIR: dataDir };
    expect(Bun.spawnSync([out, 'user', 'create', '--email', 'ann@example.org'], { env }).exitCode).toBe(0);
    const { key } = JSON.parse(Bun.spawnSync([out, 'apikey', 'create', '--email', 'ann@example.org', '--json'], { env }).stdout.toString());
    // The limits the server applies on default settings.
    const config = loadConfig({});
    const limitOf = (path: string) => bodyLimitOf(operations.find((o) => o.path === path)!, config);
    // Every shape to the operations with the largest limit (chat/stream), the free-form one and
    // an ordinary one. images/convertImage has the same limit and reads its body the same way
    // before it waits for a turn: it gets the shapes that pass the bounds and are parsed.
    const parsed = (kind: string) => kind.includes(' keys of ') || kind === 'one long string';
    const targets: [string, (kind: string) => boolean][] = [
      ['chat/stream', () => true],
      ['images/convertImage', parsed],
      ['widget/addThreadMessage', () => true],
      ['preferences/get', () => true],
    ];

    const proc = Bun.spawn([out, 'serve', '--port', '0'], { env, stdout: 'pipe', stderr: 'pipe' });
    try {
      const url = await waitForListening(proc);
      const post = (path: string, body: Uint8Array) =>
        fetch(`${url}/api/${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body });
      const idle = memoryOf(proc.pid);
      const seen: string[] = [];
      const bodiesOf = new Map<number, ReturnType<typeof costlyBodies>>();
      for (const [path, sends] of targets) {
        const limit = limitOf(path);
        if (!bodiesOf.has(limit)) bodiesOf.set(limit, costlyBodies(limit));
        for (const { kind, body } of bodiesOf.get(limit)!.filter((b) => sends(b.kind))) {
          expect(body.byteLength).toBeLessThanOrEqual(limit);
          const health = fetch(`${url}/api/health`).then((r) => r.status);
          const answers = await Promise.all(Array.from({ length: 4 }, () => post(path, body).then(async (r) => ({ status: r.status, text: await r.text() }))));
          for (const a of answers) {
            const label = `${path} ← ${kind} (${(body.byteLength / MB).toFixed(1)} MB)`;
            // Refused as too costly (413), or parsed and refused by validation (400). Never a 5xx.
            expect({ label, status: a.status, text: a.text.slice(0, 200) }).toEqual({ label, status: a.status === 413 ? 413 : 400, text: expect.any(String) });
          }
          expect(await health).toBe(200);
          const peak = memoryOf(proc.pid).hwm;
          seen.push(`${path} ${kind}: ${answers[0]!.status}, peak ${peak.toFixed(0)} MB`);
          // After each shape: a server past the bound fails here, not after minutes of the others.
          expect({ after: seen.at(-1), underBound: peak < PEAK_BOUND_MB }).toEqual({ after: seen.at(-1), underBound: true });
        }
      }
      expect((await fetch(`${url}/api/health`)).status).toBe(200);
      console.log(`idle ${idle.rss.toFixed(0)} MB; peak ${memoryOf(proc.pid).hwm.toFixed(0)} MB\n  ${seen.join('\n  ')}`);
    } finally {
      proc.kill('SIGTERM');
      await proc.exited;
    }
  });
});
