import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serverDatabase, until } from './helpers';
import { startFakeOpenAI } from './fakes/openai';
import { SseReader } from './support/test-ops';
import { waitForListening } from '../scripts/lib/wait-for-listening';
import { spawnedParley } from './support/spawned-parley';

// Usage metering records each call as it ends (docs/usage.md): a process killed mid-turn keeps
// the usage of the calls that finished before it, on either store.

setDefaultTimeout(90_000);

const openai = startFakeOpenAI();
afterAll(() => openai.stop());

describe('usage after a SIGKILL', () => {
  test('a turn killed in its second round keeps the first round\'s usage, as the provider reported it', async () => {
    // Round 1: a tool call, reported; round 2: a few words, then the server hangs.
    let round = 0;
    openai.chatScript = () =>
      round++ === 0
        ? {
            deltas: [{ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'no_such_tool', arguments: '{}' } }] }],
            finish_reason: 'tool_calls',
            usage: { prompt_tokens: 321, completion_tokens: 12, total_tokens: 333 },
          }
        : { deltas: [{ content: 'Partly ' }, { content: 'written' }, { content: ' answer.' }], hangAfter: 1 };
    const dataDir = mkdtempSync(join(tmpdir(), 'parley-usage-kill-'));
    const { databaseUrl } = await serverDatabase();
    const env = {
      PATH: process.env.PATH ?? '',
      PARLEY_DATA_DIR: dataDir,
      PARLEY_AI_PROVIDER: 'openai-chat',
      PARLEY_AI_BASE_URL: openai.url,
      PARLEY_AI_MODEL: 'small',
      PARLEY_LOG_LEVEL: 'error',
      ...(databaseUrl ? { PARLEY_DATABASE_URL: databaseUrl } : {}),
    };
    const parley = spawnedParley(env);
    const key = parley.userWithKey('ann@example.org');
    const proc = parley.serve();
    try {
      const url = await waitForListening(proc);
      const stream = await fetch(`${url}/api/chat/stream`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Hi' }) });
      expect(stream.status).toBe(200);
      const reader = new SseReader(stream.body!);
      await reader.until((text) => text.includes('Partly'));
      // The first round is over (its usage handed to metering); the second is under way.
      await until(() => round === 2, 'the second round asked for');
      // A call's usage commits a few milliseconds after the call ends, not before the next call
      // starts (docs/usage.md): a kill inside that window would lose it. This waits it out; the
      // turn is still mid-answer, so a usage written at the turn's end would be missing.
      await Bun.sleep(500);
      proc.kill('SIGKILL');
      await proc.exited;
    } finally {
      proc.kill('SIGKILL');
    }
    const out = parley.cli(['usage', '--by', 'kind', '--json']);
    expect(out.exitCode).toBe(0);
    const report = JSON.parse(out.stdout.toString());
    expect(report.groups).toEqual([expect.objectContaining({ key: 'chat', inputTokens: 321, outputTokens: 12, calls: 1, estimatedCalls: 0 })]);
  });
});
