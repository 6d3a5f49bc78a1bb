/**
 * Connections (docs/connections.md), in process through `app.handle`, two figures:
 *
 * 1. `chat/listModels` with five chat connections, one of them dead (a server that takes the
 *    connection and never answers), against the same call with one connection: the first call
 *    (the worst: every list asked, the dead one up to its timeout) and the median of warm calls
 *    (lists kept). Each on a fresh app.
 * 2. The cost of resolving a turn's model (`deps.connections.chat`), against the path a turn took
 *    before connections (a provider built once, the configured model read from the settings):
 *    nanoseconds a call, and as a share of a whole `chat/stream` turn against a fake model server.
 *
 *   node_modules/.bin/bun run bench/connections.ts
 *
 * Figures go to bench/RESULTS.md ("Connections") as ratios against the baselines of the same run.
 */
import { createTestContext, type TestContext } from '../test/helpers';
import { modelList, startFakeOpenAI } from '../test/fakes/openai';
import { readFrames } from '../test/sse';
import { updateUser } from '../src/account/account.store';
import { providerFromEnv } from '../src/connections/adapters';
import type { Config } from '../src/config';

const WARM_CALLS = 200;
const RESOLVES = 20_000;
const TURNS = 40;

const fakes = [0, 1, 2, 3].map(() => startFakeOpenAI());
fakes.forEach((f, i) => (f.gets['/v1/models'] = modelList([`model-${i}-a`, `model-${i}-b`, `model-${i}-c`])));
const dead = Bun.serve({ port: 0, hostname: '127.0.0.1', idleTimeout: 0, fetch: () => new Promise<Response>(() => undefined) });
const env = (f = fakes[0]!): Partial<Config> => ({ aiProvider: 'openai-chat', aiBaseUrl: f.url, aiModel: 'model-0-a' });

async function app(extra: number): Promise<TestContext> {
  const ctx = await createTestContext({ users: [{ email: 'admin@example.org' }], config: env() });
  await ctx.store.write((tx) => updateUser(tx, ctx.users[0]!.user.id, { isAdmin: true }, Date.now()));
  for (let i = 1; i <= extra; i++) {
    const baseUrl = i === extra ? `http://127.0.0.1:${dead.port}/v1` : fakes[i]!.url;
    const r = await ctx.json('admin/addConnection', { name: `c${i}`, kind: 'chat', baseUrl, options: { model: `model-${i}-a` } }, ctx.users[0]);
    if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  }
  return ctx;
}

const ms = (ns: number) => ns / 1e6;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function listFigures(extra: number) {
  const ctx = await app(extra);
  const call = async () => {
    const t = Bun.nanoseconds();
    const r = await ctx.json('chat/listModels', {}, ctx.users[0]);
    if (r.status !== 200) throw new Error(`listModels ${r.status}`);
    return { ns: Bun.nanoseconds() - t, models: r.body.models.length };
  };
  const first = await call();
  // The first calls after it pay for compiling the code: left out of the warm figures.
  for (let i = 0; i < 20; i++) await call();
  const warm: number[] = [];
  for (let i = 0; i < WARM_CALLS; i++) warm.push((await call()).ns);
  return { first: ms(first.ns), p50: ms(median(warm)), worstWarm: ms(Math.max(...warm)), models: first.models };
}

async function resolveFigures() {
  const ctx = await app(4);
  await ctx.deps.connections.chat(undefined, 'chat');
  // Before connections: one provider for the process, the model a setting.
  const provider = providerFromEnv(ctx.deps.config)!;
  const before = () => ({ provider, model: ctx.deps.config.aiModel });
  // Warm-up: the first calls pay for compiling the code, not for resolving.
  for (let i = 0; i < RESOLVES; i++) {
    await before();
    await ctx.deps.connections.chat('c2/model-2-b', 'chat', { subscriptionTier: 'FREE' });
    await ctx.deps.connections.chat(undefined, 'chat');
  }
  let t = Bun.nanoseconds();
  for (let i = 0; i < RESOLVES; i++) await before();
  const beforeNs = (Bun.nanoseconds() - t) / RESOLVES;
  t = Bun.nanoseconds();
  for (let i = 0; i < RESOLVES; i++) await ctx.deps.connections.chat('c2/model-2-b', 'chat', { subscriptionTier: 'FREE' });
  const namedNs = (Bun.nanoseconds() - t) / RESOLVES;
  t = Bun.nanoseconds();
  for (let i = 0; i < RESOLVES; i++) await ctx.deps.connections.chat(undefined, 'chat');
  const defaultNs = (Bun.nanoseconds() - t) / RESOLVES;
  // A whole turn for scale: chat/stream against a fake that answers at once.
  const turns: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    const s = Bun.nanoseconds();
    await readFrames(await ctx.call('chat/stream', { message: 'Hi', model: 'c2/model-2-b' }, ctx.users[0]));
    turns.push(Bun.nanoseconds() - s);
  }
  return { beforeNs, namedNs, defaultNs, turnMs: ms(median(turns)) };
}

const one = await listFigures(0);
const five = await listFigures(4);
const resolve = await resolveFigures();
const rows = [
  ['chat/listModels, 1 connection: first call', `${one.first.toFixed(1)} ms`, '1.00×'],
  ['chat/listModels, 5 connections, 1 dead: first call (the worst)', `${five.first.toFixed(1)} ms`, `${(five.first / one.first).toFixed(2)}×`],
  ['chat/listModels, 1 connection: warm p50', `${one.p50.toFixed(3)} ms`, '1.00×'],
  ['chat/listModels, 5 connections, 1 dead: warm p50', `${five.p50.toFixed(3)} ms`, `${(five.p50 / one.p50).toFixed(2)}×`],
  ['chat/listModels, 5 connections, 1 dead: warm worst', `${five.worstWarm.toFixed(3)} ms`, `${(five.worstWarm / one.worstWarm).toFixed(2)}× (1 conn.: ${one.worstWarm.toFixed(3)} ms)`],
  ['resolving a turn, before connections (provider built once, model a setting)', `${resolve.beforeNs.toFixed(0)} ns`, '1.00×'],
  ['resolving a turn, a named model (`c2/model-2-b`, tier checked)', `${resolve.namedNs.toFixed(0)} ns`, `${(resolve.namedNs / resolve.beforeNs).toFixed(1)}×`],
  ['resolving a turn, the default model', `${resolve.defaultNs.toFixed(0)} ns`, `${(resolve.defaultNs / resolve.beforeNs).toFixed(1)}×`],
  ['a whole chat/stream turn against a fake (median)', `${resolve.turnMs.toFixed(2)} ms`, `resolving is ${((resolve.namedNs / 1e6 / resolve.turnMs) * 100).toFixed(3)} % of it`],
];
console.log(`models listed: ${one.models} (1 connection), ${five.models} (5 connections)`);
console.log('| Figure | Value | Ratio |\n|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
for (const f of fakes) f.stop();
dead.stop(true);
process.exit(0);
