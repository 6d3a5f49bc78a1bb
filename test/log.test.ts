import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { batchedStderr, createLogger } from '../src/log';

test('log lines are JSON objects with time, level, message and fields', () => {
  const lines: string[] = [];
  const log = createLogger('info', (l) => lines.push(l));
  log.debug('hidden');
  log.info('request', { path: '/api/x', status: 200, skipped: undefined });
  log.warn('plain');
  expect(lines.map((l) => l.endsWith('\n'))).toEqual([true, true]);
  const [a, b] = lines.map((l) => JSON.parse(l));
  expect(a).toEqual({ time: expect.any(String), level: 'info', msg: 'request', path: '/api/x', status: 200 });
  expect(new Date(a.time).toISOString()).toBe(a.time);
  expect(b).toEqual({ time: expect.any(String), level: 'warn', msg: 'plain' });
});

test('batched stderr: info lines go out together, in order; a warning goes out at once with them', async () => {
  const chunks: string[] = [];
  const write = batchedStderr((c) => chunks.push(c));
  write('a\n');
  write('b\n');
  expect(chunks).toEqual([]);
  await Bun.sleep(120);
  expect(chunks).toEqual(['a\nb\n']);
  write('c\n');
  write('d\n', true);
  expect(chunks).toEqual(['a\nb\n', 'c\nd\n']);
});

test('batched stderr: what is pending is written when the process exits', () => {
  const script = `import { createLogger } from ${JSON.stringify(join(import.meta.dir, '../src/log.ts'))};
const log = createLogger('info');
log.info('first');
log.info('last before exit');
process.exit(0);`;
  const r = Bun.spawnSync([process.execPath, '-e', script], { stderr: 'pipe' });
  const msgs = r.stderr.toString().trim().split('\n').map((l) => JSON.parse(l).msg);
  expect(msgs).toEqual(['first', 'last before exit']);
});
