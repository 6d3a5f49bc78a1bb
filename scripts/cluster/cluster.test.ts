/**
 * Several Parley instances on one PostgreSQL, through the compiled binary and nginx
 * (scripts/cluster/harness.ts): group events across instances, a research and a chat turn taken
 * over when their owner is killed, revocations, the per-user turn and stream caps, cancel from
 * another instance, and acknowledged
 * writes surviving a SIGKILL. Not part of the plain `bun test`: scripts/cluster/run.sh runs it
 * twice, with the cluster bus over PostgreSQL LISTEN/NOTIFY and over Redis
 * (PARLEY_CLUSTER_BUS=postgres|redis). Each scenario prints its figures; all of them are printed
 * again as one JSON report at the end.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { buildBinaryOnce } from '../../test/build-binary';
import { textEvents } from '../../test/fakes/openai';
import { startFakeAnthropic } from '../../test/fakes/anthropic';
import { TAKEOVER_BOUND_MS as TAKEOVER_MS } from '../../src/chat/turn-leases';
import { CANCELLED_MESSAGE, RESTART_MESSAGE } from '../../src/chat/respond';
import { startCluster, type BusKind, type Cluster, type Provider, type User } from './harness';
import { call, mustStream, openStream, Recorder, secs, seqOf, until, type Recorded } from './client';

/**
 * docs/scaling.md, "Takeover time": a dead instance's turns are taken over at most
 * TAKEOVER_BOUND_MS (lease 15 s + a look every second) after its last renewal, which came before
 * the kill. The slack is for two busy cores, the takeover's own queries and the resumed upstream
 * request.
 */
const TAKEOVER_SLACK_MS = 5_000;
const TAKEOVER_BOUND_MS = TAKEOVER_MS + TAKEOVER_SLACK_MS;
/** docs/scaling.md: a revoked credential's open streams on every instance "end within a second". */
const REVOKE_BOUND_MS = 1_000;

const bus = (process.env.PARLEY_CLUSTER_BUS ?? 'postgres') as BusKind;
if (bus !== 'postgres' && bus !== 'redis') throw new Error(`PARLEY_CLUSTER_BUS must be postgres or redis, not ${bus}`);

let cluster: Cluster;
const figures: Record<string, unknown> = { bus };

beforeAll(async () => {
  const binary = process.env.PARLEY_CLUSTER_BINARY || (await buildBinaryOnce());
  const started = Date.now();
  cluster = await startCluster({
    binary,
    bus,
    provider: 'openai-responses',
    env: { PARLEY_RESEARCH_MAX_PER_USER: '2', PARLEY_MAX_STREAMS_PER_USER: String(STREAM_CAP), PARLEY_RATE_LIMIT_AI: 'off', PARLEY_RATE_LIMIT_WRITE: 'off' },
  });
  figures.startSeconds = secs(Date.now() - started);
  console.log(`cluster: bus ${bus}, instances ${cluster.instances.map((i) => `${i.index}=${i.url}`).join(' ')}, nginx ${cluster.proxy.url} (up in ${figures.startSeconds} s)`);
}, 180_000);

afterAll(async () => {
  console.log(`cluster report: ${JSON.stringify(figures, null, 2)}`);
  await cluster?.stop();
});

/** A test that prints the instances' and nginx's recent output when it fails. */
function scenario(name: string, run: () => Promise<void>, timeoutMs: number) {
  test(
    name,
    async () => {
      try {
        await run();
      } catch (err) {
        console.error(`${name}: failed; the cluster's recent output:\n${cluster?.recentOutput()}`);
        throw err;
      }
    },
    timeoutMs,
  );
}

/** High enough for every other scenario's streams of one user (at most six). */
const STREAM_CAP = 8;
const url = (index: number) => cluster.instances[index - 1]!.url;
const proxy = () => cluster.proxy.url;
const isEnd = (f: Recorded) => f.data?.type === 'done' || f.data?.type === 'error';

/** Wait until each stream has sent its opening comment: its subscription is in place. */
const opened = (streams: Recorder[]) => until(() => streams.every((s) => s.comments >= 1), 'the streams to open', 15_000);

/** A slow answer: `words` text deltas, one every `delayMs`, in the current provider's wire format. */
function slowAnswer(words: number, delayMs: number): string {
  const text = Array.from({ length: words }, (_, i) => `w${i} `).join('');
  cluster.fake.eventDelayMs = delayMs;
  cluster.fake.responsesScript = () => textEvents(text, words);
  cluster.fake.chatScript = () => ({ deltas: text.split(/(?<= )/).map((content) => ({ content })) });
  return text;
}

/** Sequence numbers 1..N once each, in order, and the last frame ends the turn. */
function expectWhole(frames: Recorded[], what: string) {
  const seqs = frames.map((f) => seqOf(f.id));
  expect(seqs, `${what}: ids 1..N, no gap, no duplicate`).toEqual(seqs.map((_, i) => i + 1));
  expect(frames.filter(isEnd).length, `${what}: one final frame`).toBe(1);
  expect(isEnd(frames.at(-1)!), `${what}: the final frame is the last`).toBe(true);
}

// 1. ---------------------------------------------------------------------------------------------

scenario(
  '1. group events: subscribed on one instance, sent through the others and nginx; every stream gets every message once, in order',
  async () => {
    const [ann, bob, cat] = ['g-ann', 'g-bob', 'g-cat'].map((n) => cluster.createUser(n)) as [User, User, User];
    const group = await call(url(1), 'groupChat/createGroupChat', { name: 'Across instances' }, ann.key);
    expect(group.status).toBe(200);
    const groupChatId = group.body.id as string;
    const invite = await call(url(2), 'groupChat/createInvite', { groupChatId }, ann.key);
    expect(invite.status).toBe(200);
    expect((await call(url(3), 'groupChat/joinGroup', { code: invite.body.code }, bob.key)).status).toBe(200);
    expect((await call(proxy(), 'groupChat/joinGroup', { code: invite.body.code }, cat.key)).status).toBe(200);

    const subscribe = (base: string, u: User) => mustStream(base, 'groupChat/subscribeToGroup', { groupChatId }, u.key);
    const streams: Record<string, Recorder> = {
      'ann@1': await subscribe(url(1), ann),
      'bob@2': await subscribe(url(2), bob),
      'cat@3': await subscribe(url(3), cat),
      'ann@nginx': await subscribe(proxy(), ann),
      'bob@nginx': await subscribe(proxy(), bob),
    };
    await opened(Object.values(streams));

    const acks = new Map<string, number>(); // message id → when its send was answered
    const via = new Map<string, string>(); // message id → the way it was sent
    const send = async (base: string, u: User, message: string) => {
      const res = await call(base, 'groupChat/sendGroupMessage', { groupChatId, message }, u.key);
      expect(res.status, `send through ${base}`).toBe(200);
      acks.set(res.body.id, Date.now());
      via.set(res.body.id, base === proxy() ? 'nginx' : `instance ${cluster.instances.findIndex((i) => i.url === base) + 1}`);
      return res.body.id as string;
    };
    // One after another, the senders and the ways in taking turns: the streams must show this order.
    const routes = [url(2), url(3), proxy(), url(1)];
    const people = [ann, bob, cat];
    const inOrder: string[] = [];
    for (let i = 0; i < 30; i++) inOrder.push(await send(routes[i % routes.length]!, people[i % people.length]!, `in order ${i}`));
    // Then three senders at once, each through its own way, each keeping its own order.
    const burst = await Promise.all(
      ([
        [url(2), ann],
        [url(3), bob],
        [proxy(), cat],
      ] as const).map(async ([base, u]) => {
        const ids: string[] = [];
        for (let i = 0; i < 20; i++) ids.push(await send(base, u, `burst ${u.email} ${i}`));
        return ids;
      }),
    );
    const total = inOrder.length + burst.flat().length;

    const created = (s: Recorder) => s.frames.filter((f) => f.data?.type === 'message.created');
    const waitStarted = Date.now();
    await Promise.all(
      Object.entries(streams).map(([name, s]) =>
        until(() => created(s).length >= total || !s.open, `${name} to get ${total} messages`, 10_000).catch(() => undefined),
      ),
    );
    // First what each stream missed, by the way each missed message was sent: a failure's diagnosis.
    const missed = Object.fromEntries(
      Object.entries(streams).map(([name, s]) => {
        const got = new Set(created(s).map((f) => f.data.message.id as string));
        return [name, [...acks.keys()].filter((id) => !got.has(id)).map((id) => via.get(id))];
      }),
    );
    console.log(`1. groups: messages each stream missed, by the way they were sent: ${JSON.stringify(missed)}`);
    const lastLatency: Record<string, number> = {};
    const sequences: string[][] = [];
    for (const [name, s] of Object.entries(streams)) {
      const frames = created(s);
      const ids = frames.map((f) => f.data.message.id as string);
      expect(s.open, `${name} still open`).toBe(true);
      expect(ids.length, `${name}: messages received (sent ${total})`).toBe(total);
      expect(new Set(ids).size, `${name}: each message once`).toBe(total);
      expect(new Set(ids)).toEqual(new Set(acks.keys()));
      const eventIds = frames.map((f) => Number(f.id));
      expect(eventIds.every((id, i) => i === 0 || id > eventIds[i - 1]!), `${name}: event ids increase`).toBe(true);
      expect(ids.slice(0, inOrder.length), `${name}: the sequential sends in their order`).toEqual(inOrder);
      for (const own of burst) expect(ids.filter((id) => own.includes(id)), `${name}: a sender's burst in its order`).toEqual(own);
      sequences.push(ids);
      lastLatency[name] = Math.max(...frames.map((f) => f.at - acks.get(f.data.message.id)!));
    }
    for (const seq of sequences) expect(seq, 'every stream in the same order').toEqual(sequences[0]!);
    for (const s of Object.values(streams)) await s.close();
    figures.groups = { messages: total, streams: Object.keys(streams).length, worstDeliveryAfterAckMs: lastLatency, waitedMs: Date.now() - waitStarted };
    console.log(`1. groups: ${total} messages reached ${Object.keys(streams).length} streams once each, in order; worst delivery after the send's answer (ms): ${JSON.stringify(lastLatency)}`);
  },
  90_000,
);

// 2. ---------------------------------------------------------------------------------------------

/**
 * A turn started through nginx, its owner SIGKILLed mid-stream, the client reconnecting through
 * nginx: with chat/stream and Last-Event-ID, and (a second client) with chat/resumeStream.
 */
async function takeover(provider: Provider, path: 'chat/stream' | 'chat/streamDeepResearch') {
  if (cluster.provider !== provider) await cluster.useProvider(provider);
  const u = cluster.createUser(`takeover-${provider}`);
  const text = slowAnswer(60, 100);
  const request = { message: 'Tell me a long story.' };
  const first = await mustStream(proxy(), path, request, u.key);
  const responseId = (await first.waitFor((f) => f.data?.type === 'response.created', 15_000, 'response.created')).data.responseId as string;
  await until(() => first.frames.filter((f) => f.data?.type === 'text.delta').length >= 10 || !first.open, 'ten text deltas', 20_000);
  const owner = await cluster.leaseHolder(`response:${responseId}`);
  expect(owner, 'the turn has a lease held by a live instance').toBeDefined();
  const others = cluster.instances.filter((i) => i !== owner).map((i) => i.index);
  const requestsAtKill = cluster.fake.requests.length;
  const killedAt = await cluster.kill(owner!.index);
  // The owner is gone: nothing more of the turn is stored until another instance takes it over.
  const storedAtKill = Number((await cluster.sql`SELECT coalesce(max(seq), 0) AS n FROM response_events WHERE response_id = ${responseId}`)[0].n);
  await first.waitEnd(10_000, "the first stream's end when its instance died");
  const before = first.withIds;
  expect(before.some(isEnd), 'the first stream did not end the turn').toBe(false);
  const lastId = before.at(-1)!.id!;

  /** Follow through nginx from `lastId` until the turn's final frame, reconnecting when a stream is cut. */
  const follow = async (open: (after: string) => Promise<Recorder>) => {
    const frames: Recorded[] = [];
    let connections = 0;
    const hardDeadline = killedAt + TAKEOVER_BOUND_MS + 20_000;
    while (!frames.some(isEnd) && Date.now() < hardDeadline) {
      const stream = await open(frames.at(-1)?.id ?? lastId);
      connections++;
      await stream.waitFor(isEnd, hardDeadline - Date.now(), 'the final frame').catch(() => undefined);
      frames.push(...stream.withIds);
      await stream.close();
    }
    return { frames, connections };
  };
  const [byHeader, byResume] = await Promise.all([
    follow((after) => mustStream(proxy(), path, request, u.key, { 'last-event-id': after })),
    follow((after) => mustStream(proxy(), 'chat/resumeStream', { responseId, after }, u.key)),
  ]);

  // Its log line may come a moment after the frames (the log is written in batches).
  const tookOver = () => cluster.instances.filter((i) => /"msg":"took over interrupted responses"/.test(i.output()));
  await until(() => tookOver().length > 0, "an instance's 'took over interrupted responses' line", 3_000).catch(() => undefined);
  const taker = tookOver();
  const endFrame = byHeader.frames.find(isEnd);
  const firstNew = byHeader.frames.find((f) => seqOf(f.id) > storedAtKill);
  const row = (await cluster.sql`SELECT status, error, upstream_id FROM responses WHERE id = ${responseId}`)[0];
  const result = {
    owner: owner!.index,
    takenOverBy: taker.map((i) => i.index),
    framesBeforeKill: before.length,
    storedAtKill,
    framesAfter: byHeader.frames.length,
    reconnections: { lastEventId: byHeader.connections, resumeStream: byResume.connections },
    takeoverSeconds: firstNew ? secs(firstNew.at - killedAt) : null,
    endedAfterKillSeconds: endFrame ? secs(endFrame.at - killedAt) : null,
    boundSeconds: TAKEOVER_BOUND_MS / 1000,
    ending: endFrame?.data,
    status: row?.status,
  };
  console.log(`2. takeover (${path}, ${provider}): ${JSON.stringify(result)}`);
  figures[`takeover ${path} ${provider}`] = result;

  expectWhole([...before, ...byHeader.frames], 'reconnected with Last-Event-ID');
  expectWhole([...before, ...byResume.frames], 'reconnected with chat/resumeStream');
  expect(byResume.frames.map((f) => f.data)).toEqual(byHeader.frames.map((f) => f.data));
  expect(taker.length, 'exactly one instance took the turn over').toBe(1);
  expect(others).toContain(taker[0]!.index);
  expect(endFrame!.at - killedAt, `the turn ended within ${TAKEOVER_BOUND_MS} ms of the kill`).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
  const deltas = [...before, ...byHeader.frames].filter((f) => f.data.type === 'text.delta').map((f) => f.data.delta).join('');
  if (provider === 'openai-responses') {
    // Resumed from the upstream background response: the whole answer, each piece once.
    expect(endFrame!.data).toEqual({ type: 'done' });
    expect(deltas).toBe(text);
    expect(row?.status).toBe('completed');
    const retrieved = cluster.fake.requests.slice(requestsAtKill).filter((r) => r.path.startsWith(`GET /v1/responses/${row?.upstream_id}?`));
    expect(retrieved.length, 'the new owner retrieved the upstream response once').toBe(1);
  } else {
    // Chat Completions cannot continue a turn: it ends with the restart error, keeping what was said.
    expect(endFrame!.data).toEqual({ type: 'error', message: RESTART_MESSAGE });
    expect(text.startsWith(deltas) && deltas.length > 0).toBe(true);
    expect(row?.status).toBe('failed');
  }
  expect(await cluster.leaseHolder(`response:${responseId}`), 'the lease is let go when the turn ends').toBeUndefined();
  await cluster.restart(owner!.index);
}

scenario(
  '2a. takeover: the owner of a deep research is SIGKILLed mid-stream; resumed elsewhere (openai-responses), the client reconnects through nginx',
  () => takeover('openai-responses', 'chat/streamDeepResearch'),
  150_000,
);
scenario('2b. takeover: the same with a chat turn on openai-chat, which cannot resume: the turn ends with the restart error', () => takeover('openai-chat', 'chat/stream'), 150_000);

// 3. ---------------------------------------------------------------------------------------------

scenario(
  "3. revoking an API key on one instance ends its streams on the others and its next requests answer 401",
  async () => {
    if (cluster.provider !== 'openai-responses') await cluster.useProvider('openai-responses');
    const u = cluster.createUser('revoke');
    const second = await call(url(1), 'auth/createApiKey', { name: 'kept' }, u.key);
    expect(second.status).toBe(200);
    const kept = second.body.key as string;
    const group = await call(url(1), 'groupChat/createGroupChat', { name: 'Revocation' }, u.key);
    const groupChatId = group.body.id as string;
    const sub = (base: string, key: string) => mustStream(base, 'groupChat/subscribeToGroup', { groupChatId }, key);
    const revokedStreams: Record<string, Recorder> = { 'instance 2': await sub(url(2), u.key), 'instance 3': await sub(url(3), u.key), nginx: await sub(proxy(), u.key) };
    const keptStreams: Record<string, Recorder> = { 'instance 2': await sub(url(2), kept), 'instance 3': await sub(url(3), kept) };
    await opened([...Object.values(revokedStreams), ...Object.values(keptStreams)]);
    // Every instance has the key cached now (a request each).
    for (const i of [1, 2, 3]) expect((await call(url(i), 'preferences/get', {}, u.key)).status).toBe(200);

    const revokedAt = Date.now();
    const revoked = await call(url(1), 'auth/revokeApiKey', { keyId: u.keyId }, kept);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ success: true });
    const endedAfter: Record<string, number> = {};
    await Promise.all(
      Object.entries(revokedStreams).map(async ([name, s]) => {
        await s.waitEnd(REVOKE_BOUND_MS + 10_000, `the revoked key's stream on ${name} to end`);
        endedAfter[name] = s.endedAt! - revokedAt;
      }),
    );
    const statuses: Record<string, number> = {};
    for (const [name, base] of [['instance 1', url(1)], ['instance 2', url(2)], ['instance 3', url(3)], ['nginx', proxy()]] as const) {
      const res = await call(base, 'preferences/get', {}, u.key);
      statuses[name] = res.status;
      expect(res.status, `the revoked key on ${name}`).toBe(401);
      expect(res.body.code).toBe('UNAUTHORIZED');
    }
    // The user's other key, and its streams, are untouched.
    for (const [name, s] of Object.entries(keptStreams)) expect(s.open, `the other key's stream on ${name}`).toBe(true);
    const sent = await call(url(2), 'groupChat/sendGroupMessage', { groupChatId, message: 'still here' }, kept);
    expect(sent.status).toBe(200);
    await keptStreams['instance 2']!.waitFor((f) => f.data?.message?.id === sent.body.id, 10_000, 'the message on the kept stream');
    for (const i of [1, 2, 3]) expect((await call(url(i), 'preferences/get', {}, kept)).status).toBe(200);
    for (const s of Object.values(keptStreams)) await s.close();

    figures.revoke = { streamsEndedAfterMs: endedAfter, boundMs: REVOKE_BOUND_MS, nextRequest: statuses };
    console.log(`3. revoke: the key's streams ended after (ms) ${JSON.stringify(endedAfter)}; its next requests answered ${JSON.stringify(statuses)}`);
    for (const [name, ms] of Object.entries(endedAfter)) expect(ms, `the stream on ${name} ended within ${REVOKE_BOUND_MS} ms`).toBeLessThanOrEqual(REVOKE_BOUND_MS);
  },
  60_000,
);

// 4. ---------------------------------------------------------------------------------------------

scenario(
  '4. the per-user turn cap (PARLEY_RESEARCH_MAX_PER_USER=2) holds across instances',
  async () => {
    slowAnswer(400, 100);
    const u = cluster.createUser('cap');
    const start = async (base: string, path = 'chat/stream') => {
      const r = await openStream(base, path, { message: 'slow please' }, u.key);
      if (!(r instanceof Recorder)) return r;
      const created = await r.waitFor((f) => f.data?.type === 'response.created', 15_000, 'response.created');
      return { stream: r, responseId: created.data.responseId as string };
    };
    const expect429 = (r: Awaited<ReturnType<typeof start>>, where: string) => {
      expect('status' in r ? r.status : 200, `a third turn through ${where}`).toBe(429);
      const refused = r as { status: number; body: any; headers: Headers };
      expect(refused.body).toEqual({ defined: false, code: 'TOO_MANY_REQUESTS', status: 429, message: 'Too Many Requests', data: expect.anything() });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    };
    const one = await start(url(1));
    const two = await start(url(2));
    if (!('stream' in one) || !('stream' in two)) throw new Error(`the first two turns were refused: ${JSON.stringify([one, two].map((r) => ('status' in r ? r.status : 200)))}`);
    const holders = [await cluster.leaseHolder(`response:${one.responseId}`), await cluster.leaseHolder(`response:${two.responseId}`)].map((i) => i?.index);
    expect(holders, 'the two turns run on instances 1 and 2').toEqual([1, 2]);
    expect429(await start(url(3)), 'instance 3');
    expect429(await start(proxy()), 'nginx');
    expect429(await start(url(3), 'chat/streamDeepResearch'), 'instance 3 (research)');

    // One ends: a turn may start again, on any instance.
    expect((await call(url(3), 'chat/cancelResponse', { responseId: one.responseId }, u.key)).body).toEqual({ success: true, status: 'cancelled' });
    await one.stream.waitEnd(10_000);
    const three = await start(url(3));
    expect('stream' in three, 'a turn after one ended').toBe(true);

    // Three at once, one through each instance: the cap lets exactly two in.
    const v = cluster.createUser('cap-race');
    const racers = await Promise.all([1, 2, 3].map((i) => openStream(url(i), 'chat/stream', { message: 'race' }, v.key)));
    const admitted = racers.filter((r): r is Recorder => r instanceof Recorder);
    const refused = racers.filter((r) => !(r instanceof Recorder)).map((r) => (r as { status: number }).status);

    const cleanup = async (key: string, streams: Recorder[]) => {
      for (const s of streams) {
        const created = await s.waitFor((f) => f.data?.type === 'response.created', 15_000, 'response.created').catch(() => undefined);
        if (created) await call(url(1), 'chat/cancelResponse', { responseId: created.data.responseId }, key);
        await s.close();
      }
    };
    await cleanup(u.key, [two.stream, (three as { stream: Recorder }).stream]);
    await cleanup(v.key, admitted);
    figures.cap = { limit: 2, sequential: 'third refused on instance 3, nginx and research; admitted again after a cancel', race: { admitted: admitted.length, refused } };
    console.log(`4. cap: the third turn answered 429 on instance 3 and through nginx; three at once on three instances: ${admitted.length} admitted, refused ${JSON.stringify(refused)}`);
    expect(admitted.length, 'three at once: two admitted').toBe(2);
    expect(refused).toEqual([429]);
  },
  90_000,
);

// 4b. --------------------------------------------------------------------------------------------

scenario(
  `4b. the per-user stream cap (PARLEY_MAX_STREAMS_PER_USER=${STREAM_CAP}) holds across instances`,
  async () => {
    const u = cluster.createUser('stream-cap');
    const { id: groupChatId } = (await call(url(1), 'groupChat/createGroupChat', { name: 'streams' }, u.key)).body as { id: string };
    const open = (base: string) => openStream(base, 'groupChat/subscribeToGroup', { groupChatId }, u.key);
    const streams: Recorder[] = [];
    for (let i = 0; i < STREAM_CAP; i++) {
      const r = await open(url((i % 3) + 1));
      if (!(r instanceof Recorder)) throw new Error(`stream ${i + 1} of ${STREAM_CAP} was refused: ${r.status}`);
      streams.push(r);
    }
    // The cap is the user's on the cluster: one more is refused on every instance and through nginx.
    for (const base of [url(1), url(2), url(3), proxy()]) {
      const r = await open(base);
      expect(r instanceof Recorder ? 200 : r.status, `stream ${STREAM_CAP + 1} through ${base}`).toBe(429);
      if (!(r instanceof Recorder)) expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // One closed on instance 1 frees a slot on instance 3.
    const closedAt = Date.now();
    await streams.shift()!.close();
    let again: Awaited<ReturnType<typeof open>> | undefined;
    await until(
      async () => {
        again = await open(url(3));
        return again instanceof Recorder;
      },
      'a stream once one was closed on another instance',
      20_000,
    );
    const freedMs = Date.now() - closedAt;
    streams.push(again as Recorder);
    for (const r of streams) await r.close();
    figures.streamCap = { cap: STREAM_CAP, refusedOn: 'instances 1, 2, 3 and nginx', freedAfterMs: freedMs };
    console.log(`4b. stream cap ${STREAM_CAP}: the next refused on every instance and nginx; a slot closed on instance 1 was free on instance 3 after ${freedMs} ms`);
  },
  60_000,
);

// 5. ---------------------------------------------------------------------------------------------

scenario(
  '5. cancelling a turn through an instance that does not own it',
  async () => {
    slowAnswer(300, 100);
    const u = cluster.createUser('cancel');
    const stream = await mustStream(url(1), 'chat/stream', { message: 'go on and on' }, u.key);
    const responseId = (await stream.waitFor((f) => f.data?.type === 'response.created', 15_000, 'response.created')).data.responseId as string;
    await stream.waitFor((f) => f.data?.type === 'text.delta', 15_000, 'a text delta');
    expect((await cluster.leaseHolder(`response:${responseId}`))?.index, 'instance 1 owns the turn').toBe(1);
    // A follower on a third instance: the live tail crosses the bus.
    const follower = await mustStream(url(3), 'chat/resumeStream', { responseId, after: 0 }, u.key);
    const seen = follower.frames.length;
    await follower.waitFor((f) => f.data?.type === 'text.delta', 15_000, 'a live text delta on instance 3', seen);

    const asked = Date.now();
    const answer = await call(url(2), 'chat/cancelResponse', { responseId }, u.key);
    const answeredMs = Date.now() - asked;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ success: true, status: 'cancelled' });
    const ends: Record<string, number> = {};
    for (const [name, s] of [['owner stream (instance 1)', stream], ['follower (instance 3)', follower]] as const) {
      const end = await s.waitFor(isEnd, 10_000, 'the final frame');
      expect(end.data, name).toEqual({ type: 'error', message: CANCELLED_MESSAGE });
      ends[name] = end.at - asked;
      expect(await s.waitEnd(5_000)).toBe('end');
      expectWhole(s.withIds, name);
    }
    const row = (await cluster.sql`SELECT status, upstream_id FROM responses WHERE id = ${responseId}`)[0];
    expect(row.status).toBe('cancelled');
    const listed = await call(url(3), 'chat/listConversations', {}, u.key);
    expect(listed.body.conversations[0].lastResponse).toMatchObject({ id: responseId, status: 'cancelled' });
    if (cluster.provider === 'openai-responses') expect(cluster.fake.cancelled, 'the upstream background response is cancelled too').toContain(row.upstream_id);
    figures.cancel = { answeredMs, streamEndedAfterMs: ends };
    console.log(`5. cancel through instance 2 of a turn on instance 1: answered in ${answeredMs} ms; streams ended after (ms) ${JSON.stringify(ends)}`);
  },
  60_000,
);

// 6. ---------------------------------------------------------------------------------------------

scenario(
  '6. SIGKILL under write load: every acknowledged write is in the database',
  async () => {
    const workers = 6;
    const users = Array.from({ length: workers }, (_, w) => cluster.createUser(`load-${w}`));
    const shared = await call(url(1), 'groupChat/createGroupChat', { name: 'Load' }, users[0]!.key);
    const groupChatId = shared.body.id as string;
    const { code } = (await call(url(1), 'groupChat/createInvite', { groupChatId }, users[0]!.key)).body;
    for (const u of users.slice(1)) expect((await call(url(2), 'groupChat/joinGroup', { code }, u.key)).status).toBe(200);
    // Each worker renames the conversation of a group of its own.
    const own = await Promise.all(users.map((u, w) => call(url((w % 3) + 1), 'groupChat/createGroupChat', { name: `Own ${w}` }, u.key)));
    const conversations = own.map((r) => r.body.conversationId as string);
    // Live streams on the instances that stay up: they must see every message, whichever instance took it.
    const watchers = [await mustStream(url(1), 'groupChat/subscribeToGroup', { groupChatId }, users[0]!.key), await mustStream(url(3), 'groupChat/subscribeToGroup', { groupChatId }, users[1]!.key)];
    await opened(watchers);

    const victim = 2;
    let stop = false;
    let killedAt = 0;
    const messageAcks: { id: string; content: string; instance: number; beforeKill: boolean }[] = [];
    const renameAttempts: { title: string; acked: boolean }[][] = users.map(() => []);
    const failures: Record<number, number> = { 1: 0, 2: 0, 3: 0 };
    const acksBy: Record<number, number> = { 1: 0, 2: 0, 3: 0 };
    const lane = async (w: number, kind: 'message' | 'rename') => {
      for (let n = 0; !stop; n++) {
        const instance = ((w + n) % 3) + 1;
        const base = url(instance);
        const beforeKill = killedAt === 0;
        try {
          if (kind === 'message') {
            const content = `load ${w}-${n}`;
            const res = await call(base, 'groupChat/sendGroupMessage', { groupChatId, message: content }, users[w]!.key);
            if (res.status === 200) {
              messageAcks.push({ id: res.body.id, content, instance, beforeKill });
              acksBy[instance]!++;
            } else failures[instance]!++;
          } else {
            const attempt = { title: `title ${w}-${n}`, acked: false };
            renameAttempts[w]!.push(attempt);
            const res = await call(base, 'chat/renameConversation', { conversationId: conversations[w], title: attempt.title }, users[w]!.key);
            attempt.acked = res.status === 200 && res.body?.success === true;
            if (attempt.acked) acksBy[instance]!++;
            else failures[instance]!++;
          }
        } catch {
          failures[instance]!++; // the connection was refused or cut: not acknowledged
        }
      }
    };
    const lanes = users.flatMap((_, w) => [lane(w, 'message'), lane(w, 'rename')]);
    const started = Date.now();
    await Bun.sleep(3_000);
    killedAt = await cluster.kill(victim);
    await Bun.sleep(3_000);
    stop = true;
    await Promise.all(lanes);
    const seconds = (Date.now() - started) / 1000;

    // What the database holds.
    const ids = messageAcks.map((a) => a.id);
    const rows = (await cluster.sql`SELECT id, content FROM conversation_items WHERE id IN ${cluster.sql(ids)}`) as { id: string; content: string }[];
    const stored = new Map(rows.map((r) => [r.id, r.content]));
    const missing = messageAcks.filter((a) => stored.get(a.id) !== a.content);
    const titles = (await cluster.sql`SELECT id, title FROM conversations WHERE id IN ${cluster.sql(conversations)}`) as { id: string; title: string }[];
    const wrongTitles: string[] = [];
    conversations.forEach((id, w) => {
      const attempts = renameAttempts[w]!;
      const lastAck = attempts.findLastIndex((a) => a.acked);
      if (lastAck < 0) return;
      // The last acknowledged title, or a later one whose request was cut by the kill (it may have landed).
      const allowed = attempts.slice(lastAck).map((a) => a.title);
      const now = titles.find((t) => t.id === id)?.title;
      if (!allowed.includes(now!)) wrongTitles.push(`worker ${w}: title "${now}", the last acknowledged "${attempts[lastAck]!.title}"`);
    });
    // The group's events: numbered 1..last_seq without a gap, one message.created per stored message.
    const events = (await cluster.sql`SELECT seq, type, data FROM group_events WHERE group_id = ${groupChatId} ORDER BY seq`) as { seq: number; type: string; data: string }[];
    const lastSeq = Number((await cluster.sql`SELECT last_seq FROM group_chats WHERE id = ${groupChatId}`)[0].last_seq);
    const eventMessageIds = events.filter((e) => e.type === 'message.created').map((e) => JSON.parse(e.data).message?.id as string);
    const ackedWithoutEvent = messageAcks.filter((a) => !eventMessageIds.includes(a.id));

    // The live streams: one last message, then every stored message once, in the events' order.
    const last = await call(url(1), 'groupChat/sendGroupMessage', { groupChatId, message: 'after the kill' }, users[0]!.key);
    expect(last.status).toBe(200);
    const allMessages = [...eventMessageIds, last.body.id as string];
    const streamed = await Promise.all(
      watchers.map(async (s, k) => {
        await s.waitFor((f) => f.data?.message?.id === last.body.id, 15_000, `the last message on watcher ${k}`).catch(() => undefined);
        await s.close();
        return s.frames.filter((f) => f.data?.type === 'message.created').map((f) => f.data.message.id as string);
      }),
    );

    const acked = messageAcks.length + renameAttempts.flat().filter((a) => a.acked).length;
    const result = {
      seconds: Math.round(seconds * 10) / 10,
      acknowledged: acked,
      acknowledgedPerSecond: Math.round(acked / seconds),
      acknowledgedByInstance: acksBy,
      messagesAcknowledgedByVictimBeforeKill: messageAcks.filter((a) => a.instance === victim && a.beforeKill).length,
      notAcknowledged: failures,
      missingMessages: missing.length,
      wrongTitles: wrongTitles.length,
      groupEvents: { count: events.length, lastSeq },
      streamsGotEveryMessage: streamed.map((ids) => ids.length === allMessages.length && ids.every((id, i) => id === allMessages[i])),
      // For a failure's diagnosis: the messages a live stream never got, by the instance that took them.
      streamsMissed: streamed.map((ids, k) => {
        const got = new Set(ids);
        const byInstance: Record<string, number> = {};
        for (const a of messageAcks) if (!got.has(a.id)) byInstance[`${a.instance}${a.beforeKill ? '' : ' after the kill'}`] = (byInstance[`${a.instance}${a.beforeKill ? '' : ' after the kill'}`] ?? 0) + 1;
        return { watcherOn: k === 0 ? 1 : 3, ...byInstance, notAcknowledgedButStored: allMessages.filter((id) => !got.has(id) && !messageAcks.some((a) => a.id === id)).length };
      }),
    };
    figures.writeLoad = result;
    console.log(`6. write load with instance ${victim} SIGKILLed: ${JSON.stringify(result)}`);

    expect(messageAcks.filter((a) => a.instance === victim && a.beforeKill).length, 'the victim acknowledged writes before its kill').toBeGreaterThan(10);
    expect(messageAcks.filter((a) => !a.beforeKill).length, 'the others went on acknowledging after the kill').toBeGreaterThan(10);
    expect(missing.map((a) => `${a.id} (${a.content}, instance ${a.instance})`), 'acknowledged messages missing from the database').toEqual([]);
    expect(wrongTitles, 'acknowledged renames lost').toEqual([]);
    expect(ackedWithoutEvent.map((a) => a.id), 'acknowledged messages without their group event').toEqual([]);
    expect(events.map((e) => Number(e.seq)), 'group events numbered without a gap').toEqual(events.map((_, i) => i + 1));
    expect(lastSeq).toBe(events.length);
    liveDuringLoad = { allMessages, streamed };
    await cluster.restart(victim);
  },
  120_000,
);

/** What scenario 6's live streams got, checked apart: durability and live delivery fail for different reasons. */
let liveDuringLoad: { allMessages: string[]; streamed: string[][] } | undefined;

scenario(
  '6b. the live group streams on the other instances got every stored message of the write load once, in order',
  async () => {
    if (!liveDuringLoad) throw new Error('scenario 6 did not get as far as its live streams');
    const { allMessages, streamed } = liveDuringLoad;
    const order = new Map(allMessages.map((id, i) => [id, i]));
    streamed.forEach((ids, k) => {
      const got = new Set(ids);
      const places = ids.map((id) => order.get(id) ?? -1);
      const summary = {
        stored: allMessages.length,
        streamed: ids.length,
        missing: allMessages.filter((id) => !got.has(id)),
        duplicates: ids.length - got.size,
        unknown: places.filter((p) => p < 0).length,
        inOrder: places.every((p, i) => i === 0 || p > places[i - 1]!),
      };
      expect(summary, `the stream on instance ${k === 0 ? 1 : 3}: every message once, in order`).toEqual({
        stored: allMessages.length,
        streamed: allMessages.length,
        missing: [],
        duplicates: 0,
        unknown: 0,
        inOrder: true,
      });
    });
  },
  10_000,
);

// 7. ---------------------------------------------------------------------------------------------

scenario(
  '7. a connection added on one instance answers on the others at once (the bus tells them; the key is shared)',
  async () => {
    const admin = cluster.createUser('conn-admin');
    await cluster.sql`UPDATE users SET is_admin = true WHERE email = ${admin.email}`;
    const claude = startFakeAnthropic({ apiKey: 'sk-ant-cluster' });
    try {
      // The others have read their connections already: what they hold must be dropped.
      for (const i of [2, 3]) expect((await call(url(i), 'chat/listModels', {}, admin.key)).status).toBe(200);
      const added = await call(url(1), 'admin/addConnection', { name: 'claude', kind: 'chat', api: 'anthropic', baseUrl: claude.url, credential: claude.apiKey }, admin.key);
      expect(added.status).toBe(200);
      for (const i of [2, 3]) {
        claude.script = () => ({ blocks: [{ type: 'text', text: `Claude via ${i}.` }] });
        const stream = await mustStream(url(i), 'chat/stream', { message: 'Hi', model: 'claude/claude-sonnet-4-6' }, admin.key);
        await stream.ended;
        const text = stream.frames.filter((f) => f.data?.type === 'text.delta').map((f) => f.data.delta).join('');
        expect({ instance: i, text }).toEqual({ instance: i, text: `Claude via ${i}.` });
      }
      // Disabled on one, refused on the others.
      expect((await call(url(3), 'admin/updateConnection', { id: 'claude', enabled: false }, admin.key)).status).toBe(200);
      const refused = await call(url(1), 'chat/stream', { message: 'Hi', model: 'claude/claude-sonnet-4-6' }, admin.key);
      expect(refused.status).toBe(400);
    } finally {
      claude.stop();
    }
  },
  60_000,
);
