/**
 * The benchmark's real-model figure (bench/figures/real-model.ts) must never build llama.cpp on
 * its own (~10 minutes): without a cached llama-server it is skipped, and its line says how to get one.
 */
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realModelFigure } from '../bench/figures/real-model';
import type { BenchContext } from '../bench/lib/context';

const saved = { cache: process.env.PARLEY_CACHE_DIR, dir: process.env.PARLEY_LLAMA_SERVER_DIR };
const emptyCache = mkdtempSync(join(tmpdir(), 'parley-empty-cache-'));

afterEach(() => {
  for (const [name, value] of [['PARLEY_CACHE_DIR', saved.cache], ['PARLEY_LLAMA_SERVER_DIR', saved.dir]] as const)
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  rmSync(emptyCache, { recursive: true, force: true });
});

test('without a cached llama-server the real-model figure is skipped with the command that builds one, and nothing is built', async () => {
  process.env.PARLEY_CACHE_DIR = emptyCache;
  delete process.env.PARLEY_LLAMA_SERVER_DIR;
  const ctx = { bin: '/nonexistent/parley', quick: true, raw: {}, log: () => {} } as unknown as BenchContext;
  const rows = await realModelFigure.run(ctx);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.figure).toBe('7 real model');
  expect(rows[0]!.skipped).toContain('scripts/real-models/build-llama-server.sh');
  expect(rows[0]!.met).toBeUndefined();
  expect(readdirSync(emptyCache)).toEqual([]);
});
