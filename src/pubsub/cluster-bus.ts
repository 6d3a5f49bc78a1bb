import { createMemoryBus, type Bus } from './bus';
import type { BusTransport } from './transport';

/** A bus whose events also reach the other instances sharing its transport. */
export interface ClusterBus extends Bus {
  /** Hand an event to this instance's listeners only (one read again from the database after a gap). */
  publishHere(topic: string, event: unknown): void;
  /** Send an event, already in its wire form (no codec), to the other instances only. */
  sendOthers(topic: string, wire: unknown): void;
  /** Send the events of topics starting with `prefix` through `codec`; other topics go as their JSON. */
  useCodec(prefix: string, codec: TopicCodec): void;
  /** Listen on the transport; the bus works locally before, and after a failure to start. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * How the events of topics starting with a prefix cross the wire, when their JSON is not enough
 * (an event holding encoded bytes, events from several instances that must be put in order):
 * `encode` gives what is sent; `receive` gets it on the other instances and hands this instance's
 * listeners the events to `deliver`, now or later, in the order it decides.
 */
export interface TopicCodec {
  encode(event: unknown): unknown;
  receive(topic: string, wire: unknown, deliver: (event: unknown) => void): void;
}

export interface ClusterBusOptions {
  /** This instance's id: its own messages come back on the channel and are dropped by it. */
  instanceId: string;

  onListenerError?: (topic: string, err: unknown) => void;
  onTransportError?: (err: unknown) => void;
}

/**
 * Messages waiting for a slow transport, at most: beyond, the oldest are dropped and the others
 * told of a gap, so a stalled database cannot make the bus hold memory without bound.
 */
const MAX_QUEUED = 10_000;

/** Incomplete split messages kept at most, and for how long. */
const MAX_ASSEMBLIES = 64;
const ASSEMBLY_TTL_MS = 60_000;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * The in-process bus (src/pubsub/bus.ts), plus every publish sent to the other instances. Local
 * listeners hear an event at once and in publish order, as before; remote ones a moment later,
 * in the same order for one sender. Messages published while a send is under way are packed
 * together, as many as fit in one payload, so a burst costs a few round trips, not one each; a
 * message larger than a payload is split in parts and put together again on arrival.
 *
 * Nothing here is durable: the transports keep nothing for an instance that was not listening.
 * What must not be lost is in the database first (response and group events), and listeners
 * told of a gap (`onGap`) read it from there.
 */
export function createClusterBus(transport: BusTransport, opts: ClusterBusOptions): ClusterBus {
  const local = createMemoryBus(opts.onListenerError);
  const origin = JSON.stringify(opts.instanceId);
  const gapListeners = new Set<() => void>();
  const queue: string[] = [];
  let draining: Promise<void> | undefined;
  let lostSends = false;
  let nextPartId = 0;
  const assemblies = new Map<string, { parts: string[]; got: number; at: number }>();

  const gap = () => {
    for (const listener of [...gapListeners]) {
      try {
        listener();
      } catch (err) {
        opts.onListenerError?.('(gap)', err);
      }
    }
  };

  const sendWhole = async (payload: string) => {
    if (bytes(payload) <= transport.maxPayloadBytes) return transport.send(payload);
    // Split into parts whose JSON-escaped text fits, never inside a character.
    const id = nextPartId++;
    const room = transport.maxPayloadBytes - 100 - bytes(origin);
    const chunks: string[] = [];
    let chunk = '';
    let size = 0;
    for (const ch of payload) {
      const cost = bytes(JSON.stringify(ch)) - 2;
      if (size + cost > room) {
        chunks.push(chunk);
        chunk = '';
        size = 0;
      }
      chunk += ch;
      size += cost;
    }
    if (chunk) chunks.push(chunk);
    for (const [i, d] of chunks.entries()) await transport.send(`{"o":${origin},"p":[${id},${i},${chunks.length}],"d":${JSON.stringify(d)}}`);
  };

  const drain = async () => {
    while (queue.length) {
      // As many queued messages as fit in one payload (at least one: a big one is split).
      const items: string[] = [];
      let size = bytes(origin) + 20;
      while (queue.length) {
        const cost = bytes(queue[0]!) + 1;
        if (items.length && size + cost > transport.maxPayloadBytes) break;
        items.push(queue.shift()!);
        size += cost;
      }
      try {
        if (lostSends) {
          await transport.send(`{"o":${origin},"g":1}`);
          lostSends = false;
        }
        await sendWhole(`{"o":${origin},"m":[${items.join(',')}]}`);
      } catch (err) {
        // The others will miss these: once sending works again they are told to read the database.
        lostSends = true;
        opts.onTransportError?.(err);
      }
    }
    draining = undefined;
  };

  const receive = (payload: string) => {
    let message: { o?: string; m?: [string, unknown][]; p?: [number, number, number]; d?: string; g?: number };
    try {
      message = JSON.parse(payload);
    } catch (err) {
      opts.onTransportError?.(err);
      return;
    }
    if (message.o === opts.instanceId) return;
    if (message.g) return gap();
    if (message.p && typeof message.d === 'string') return assemble(message.o ?? '', message.p, message.d);
    for (const [topic, event] of message.m ?? []) {
      const codec = codecOf(topic);
      if (!codec) {
        local.publish(topic, event);
        continue;
      }
      try {
        codec.receive(topic, event, (decoded) => local.publish(topic, decoded));
      } catch (err) {
        opts.onListenerError?.(topic, err);
      }
    }
  };

  const send = (topic: string, wire: unknown) => {
    queue.push(JSON.stringify([topic, wire]));
    if (queue.length > MAX_QUEUED) {
      queue.splice(0, queue.length - MAX_QUEUED);
      lostSends = true;
    }
    draining ??= drain();
  };

  const codecs: [string, TopicCodec][] = [];
  const codecOf = (topic: string) => codecs.find(([prefix]) => topic.startsWith(prefix))?.[1];

  const assemble = (from: string, [id, index, count]: [number, number, number], data: string) => {
    const key = `${from}:${id}`;
    const now = Date.now();
    for (const [k, a] of assemblies) if (now - a.at > ASSEMBLY_TTL_MS) assemblies.delete(k);
    let a = assemblies.get(key);
    if (!a) {
      if (assemblies.size >= MAX_ASSEMBLIES) assemblies.delete(assemblies.keys().next().value!);
      assemblies.set(key, (a = { parts: new Array(count), got: 0, at: now }));
    }
    if (a.parts[index] === undefined) a.got++;
    a.parts[index] = data;
    if (a.got < count) return;
    assemblies.delete(key);
    receive(a.parts.join(''));
  };

  return {
    publish(topic, event) {
      local.publish(topic, event);
      const codec = codecOf(topic);
      send(topic, codec ? codec.encode(event) : event);
    },
    sendOthers: (topic, wire) => send(topic, wire),
    subscribe: local.subscribe,
    listenerCount: local.listenerCount,
    // Another instance may have a listener: every event is sent.
    followed: () => true,
    publishHere: (topic, event) => local.publish(topic, event),
    useCodec(prefix, codec) {
      codecs.push([prefix, codec]);
    },
    start: () => transport.start(receive, gap),
    onGap(listener) {
      gapListeners.add(listener);
      return () => void gapListeners.delete(listener);
    },
    async close() {
      await draining;
      await transport.close();
    },
  };
}
