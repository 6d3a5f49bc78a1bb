import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import pkg from '../package.json' with { type: 'json' };
import { startBinaryServer } from './support/binary-server';
import { parseChangelog } from '../src/release-notes/changelog';

// Builds the executable (once per run, shared with the other binary tests) and starts it.
setDefaultTimeout(180_000);

describe('release notes in the compiled binary', () => {
  test('CHANGELOG.md is carried inside the executable and served', async () => {
    const server = await startBinaryServer();
    try {
      const res = await server.post('releaseNotes/list', {});
      expect(res.status).toBe(200);
      const releases = parseChangelog(readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8')).releases;
      expect(await res.json()).toEqual({ currentVersion: pkg.version, releases });
    } finally {
      await server.stop();
    }
  });
});
