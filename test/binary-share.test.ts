/**
 * Parley's share of the compiled executable stays within 25 MB (issue 33): the binary's size less
 * the floor, an empty program compiled now with the build's own flags on the same Bun runtime
 * (about a second: Bun copies its own executable). scripts/release.sh checks each release binary
 * the same way, the arm64 one against the arm64 runtime. bench/RESULTS.md says what the share is
 * made of.
 */
import { describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildBinaryOnce } from './build-binary';
import { MAX_SHARE_MB, MB, parleyShare } from '../scripts/lib/binary-share';
import { PYODIDE_FILES } from '../src/code/pyodide-dir';

describe("Parley's share of the binary", () => {
  test(`is at most ${MAX_SHARE_MB} MB above an empty program's; Pyodide's files are beside it`, async () => {
    const binary = await buildBinaryOnce();
    const { size, floor, share } = await parleyShare(binary);
    expect(floor).toBeGreaterThan(50 * MB);
    expect(size).toBeGreaterThan(floor);
    expect(share / MB).toBeLessThanOrEqual(MAX_SHARE_MB);
    for (const f of PYODIDE_FILES) expect(existsSync(join(dirname(binary), 'pyodide', f))).toBe(true);
  }, 300_000);
});
