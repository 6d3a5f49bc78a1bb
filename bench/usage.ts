/**
 * The cost of usage metering on a chat turn (docs/usage.md), in process through `app.handle`, on
 * SQLite in memory, against a fake OpenAI-compatible server that answers at once and reports
 * usage. Three apps, their sequential `chat/stream` turns interleaved, medians of a turn:
 *
 * - baseline: no metering (`deps.usage` the seam's no-op, as before metering);
 * - metered: the default, every tier unlimited (a row a call, with the group commit);
 * - limited: the user's tier has a token allowance (a reservation before the call, the charge after).
 *
 *   node_modules/.bin/bun run bench/usage.ts
 *
 * Figures go to bench/RESULTS.md ("Usage metering") as ratios against the baseline of the same run.
 */
import { createTestContext, type TestContext } from '../test/helpers';
import { startFakeOpenAI } from '../test/fakes/openai';
import { readFrames } from '../test/sse';
import { noopUsage } from '../src/usage/usage.types';
import { updateUser } from '../src/account/account.store';

const TURNS = 60;
const ROUNDS = 7;

const fake = startFakeOpenAI();
fake.chatScript = () => ({ deltas: [{ content: 'Hello ' }, { content: 'there.' }], usage: { prompt_tokens: 120, completion_tokens: 3, total_tokens: 123 } });
const config = { aiProvider: 'openai-chat' as const, aiBaseUrl: fake.url, aiModel: 'small', rateLimitAi: undefined };

async function app(kind: 'baseline' | 'metered' | 'limited'): Promise<TestContext> {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config, deps: kind === 'baseline' ? { usage: noopUsage } : {} });
  if (kind === 'limited') {
    await ctx.store.write((tx) => updateUser(tx, ctx.users[0]!.user.id, { isAdmin: true }, Date.now()));
    const r = await ctx.json('admin/setUsageTier', { name: 'FREE', period: 'month', tokens: 1_000_000_000 }, ctx.users[0]);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  }
  return ctx;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function turn(ctx: TestContext, i: number): Promise<number> {
  const t = Bun.nanoseconds();
  const frames = await readFrames(await ctx.call('chat/stream', { message: `Hi ${i}` }, ctx.users[0]));
  if (frames.at(-1)?.data.type !== 'done') throw new Error(`turn ended with ${JSON.stringify(frames.at(-1)?.data)}`);
  return (Bun.nanoseconds() - t) / 1e6;
}

const kinds = ['baseline', 'metered', 'limited'] as const;
const apps = Object.fromEntries(await Promise.all(kinds.map(async (k) => [k, await app(k)] as const))) as Record<(typeof kinds)[number], TestContext>;
const all: Record<string, number[]> = { baseline: [], metered: [], limited: [] };
// Turn by turn, the three apps in a rotating order: the machine's load swings hit them alike.
for (let i = 0; i < TURNS * (ROUNDS + 1); i++) {
  const order = [...kinds.slice(i % 3), ...kinds.slice(0, i % 3)];
  for (const k of order) {
    const ms = await turn(apps[k], i);
    if (i >= TURNS) all[k]!.push(ms); // the first TURNS are warm-up
  }
}
const base = median(all.baseline!);
console.log(`chat/stream turns against a fake, SQLite in memory, ${TURNS * ROUNDS} a kind, interleaved turn by turn:`);
for (const k of kinds) console.log(`  ${k.padEnd(9)} median ${median(all[k]!).toFixed(3)} ms  ×${(median(all[k]!) / base).toFixed(3)}`);
fake.stop();
process.exit(0);
