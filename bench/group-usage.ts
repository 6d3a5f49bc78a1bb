/**
 * The cost of usage metering on `groupChat/sendGroupMessage`'s group commit (docs/usage.md), in
 * process through `app.handle`, on SQLite files (WAL, as a server runs), against a fake
 * OpenAI-compatible server that answers at once and reports usage. A group's messages that address
 * the assistant (`@ai`, one in EVERY) start an answer behind the sender's response; the answer's
 * usage row joins the commit queue with the messages being sent. Three apps, each its own group:
 *
 * - baseline: no metering (`deps.usage` the seam's no-op, as before metering);
 * - metered: the default, every tier unlimited (a usage row an answer, with the group commit);
 * - limited: the senders' tier has a token allowance (a reservation written before each answer,
 *   the charge after).
 *
 * A fourth app, a second baseline, measures the noise: the same work, so its ratio to the first
 * is what the machine alone makes of two identical apps.
 *
 * A round: SENDERS concurrent senders send PER_ROUND messages between them; its figures are the
 * messages a second of `sendGroupMessage` (first request to last response), the median request,
 * and the process's CPU time from the round's start until its answers are all in (the messages,
 * the answers and their usage rows; the fake's share is the same for every app). The answers are
 * waited for, so no app's answers run into another's round. Rounds rotate the order of the apps;
 * medians over the rounds; ratios against the baseline. On a machine shared with other work the
 * CPU time is the steadier figure: the rates move with whatever else runs.
 *
 *   node_modules/.bin/bun run bench/group-usage.ts [--rounds N]
 *
 * Figures go to bench/RESULTS.md ("Usage metering") as ratios against the baseline of the same run.
 */
import { sql } from 'drizzle-orm';
import { parseArgs } from 'node:util';
import { createTestContext, type TestContext } from '../test/helpers';
import { startFakeOpenAI } from '../test/fakes/openai';
import { noopUsage } from '../src/usage/usage.types';
import { updateUser } from '../src/account/account.store';
import { median } from './lib/stats';

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { rounds: { type: 'string', default: '12' } } });
const ROUNDS = Number(values.rounds);
const SENDERS = 32;
const PER_ROUND = 640;
const EVERY = 8;

const fake = startFakeOpenAI();
fake.chatScript = () => ({ deltas: [{ content: 'Sure, ' }, { content: 'done.' }], usage: { prompt_tokens: 300, completion_tokens: 3, total_tokens: 303 } });
const config = { aiProvider: 'openai-chat' as const, aiBaseUrl: fake.url, aiModel: 'small', rateLimitAi: undefined, rateLimitWrite: undefined };

type Kind = 'baseline' | 'baseline 2' | 'metered' | 'limited';
interface App {
  ctx: TestContext;
  groupId: string;
  answers: number;
}

async function app(kind: Kind): Promise<App> {
  const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }], config, durable: true, deps: kind.startsWith('baseline') ? { usage: noopUsage } : {} });
  const ann = ctx.users[0]!;
  if (kind === 'limited') {
    await ctx.store.write((tx) => updateUser(tx, ann.user.id, { isAdmin: true }, Date.now()));
    const r = await ctx.json('admin/setUsageTier', { name: 'FREE', period: 'month', tokens: 1_000_000_000 }, ann);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  }
  const g = await ctx.json('groupChat/createGroupChat', { name: 'Bench' }, ann);
  if (g.status !== 200) throw new Error(JSON.stringify(g.body));
  return { ctx, groupId: g.body.id, answers: 0 };
}

async function assistantMessages(ctx: TestContext): Promise<number> {
  const [row] = await ctx.query<{ n: number }>(sql`SELECT count(*) AS n FROM conversation_items WHERE role = 'assistant'`);
  return Number(row!.n);
}

/** One round on `a`: its messages a second and median request, once its answers are in. */
async function round(a: App, r: number): Promise<Measures> {
  const ann = a.ctx.users[0]!;
  const latencies: number[] = [];
  let next = 0;
  const cpu0 = process.cpuUsage();
  const t0 = Bun.nanoseconds();
  await Promise.all(
    Array.from({ length: SENDERS }, async () => {
      for (let i = next++; i < PER_ROUND; i = next++) {
        const message = i % EVERY === 0 ? `@ai round ${r}, question ${i}?` : `round ${r}, message ${i}`;
        const t = Bun.nanoseconds();
        const res = await a.ctx.call('groupChat/sendGroupMessage', { groupChatId: a.groupId, message }, ann);
        if (res.status !== 200) throw new Error(`sendGroupMessage answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
        latencies.push((Bun.nanoseconds() - t) / 1e6);
      }
    }),
  );
  const seconds = (Bun.nanoseconds() - t0) / 1e9;
  a.answers += PER_ROUND / EVERY;
  for (const end = Date.now() + 60_000; (await assistantMessages(a.ctx)) < a.answers; await Bun.sleep(20))
    if (Date.now() > end) throw new Error(`the answers of round ${r} did not all come (${await assistantMessages(a.ctx)} of ${a.answers})`);
  const cpu = process.cpuUsage(cpu0);
  return { perS: PER_ROUND / seconds, p50: median(latencies), cpuMs: (cpu.user + cpu.system) / 1000 };
}

interface Measures {
  perS: number;
  p50: number;
  cpuMs: number;
}
const kinds: Kind[] = ['baseline', 'baseline 2', 'metered', 'limited'];
const apps = {} as Record<Kind, App>;
const all = {} as Record<Kind, Measures[]>;
for (const k of kinds) {
  apps[k] = await app(k);
  all[k] = [];
}
// Round 0 is warm-up; then the three apps in a rotating order: the machine's swings hit them alike.
for (let r = 0; r <= ROUNDS; r++) {
  const order = [...kinds.slice(r % kinds.length), ...kinds.slice(0, r % kinds.length)];
  for (const k of order) {
    const got = await round(apps[k], r);
    if (r > 0) all[k].push(got);
  }
}
const usageRows = async (k: Kind) => Number((await apps[k].ctx.query<{ n: number }>(sql`SELECT count(*) AS n FROM usage_records`))[0]!.n);
const med = (k: Kind, m: keyof Measures) => median(all[k].map((x) => x[m]));
const ratio = (k: Kind, m: keyof Measures) => `×${(med(k, m) / med('baseline', m)).toFixed(3)}`;
console.log(`sendGroupMessage to one group, ${SENDERS} senders at once, ${PER_ROUND} messages a round (one in ${EVERY} to @ai), ${ROUNDS} rounds an app, SQLite files:`);
for (const k of kinds)
  console.log(
    `  ${k.padEnd(10)} ${med(k, 'perS').toFixed(0).padStart(6)} messages/s ${ratio(k, 'perS')}   median request ${med(k, 'p50').toFixed(2)} ms ${ratio(k, 'p50')}   CPU a round ${med(k, 'cpuMs').toFixed(0)} ms ${ratio(k, 'cpuMs')}   usage rows ${await usageRows(k)}, answers ${await assistantMessages(apps[k].ctx)}`,
  );
fake.stop();
process.exit(0);
