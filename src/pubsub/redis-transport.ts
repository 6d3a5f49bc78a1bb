import { RedisClient } from 'bun';
import type { BusTransport } from './transport';

export const REDIS_BUS_CHANNEL = 'parley:bus';

/**
 * The bus over Redis (or Valkey) pub/sub, on Bun's built-in client, for deployments whose fan-out
 * outgrows PostgreSQL's NOTIFY. A subscribed connection can do nothing else, so sending has its
 * own. Bun does not reconnect a closed client by itself: the subscriber reconnects with back-off
 * (0.1 s doubling to 5 s) and reports the gap once it listens again.
 */
export function redisTransport(url: string, channel = REDIS_BUS_CHANNEL): BusTransport {
  const publisher = new RedisClient(url, { autoReconnect: true, enableOfflineQueue: true });
  let subscriber: RedisClient | undefined;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    maxPayloadBytes: 512 * 1024,
    async start(onPayload, onGap) {
      const listen = async () => {
        const client = new RedisClient(url, { autoReconnect: false });
        subscriber = client;
        client.onclose = () => {
          if (closed || subscriber !== client) return;
          retry(100);
        };
        await client.connect();
        await client.subscribe(channel, (message) => onPayload(message));
      };
      const retry = (delayMs: number) => {
        timer = setTimeout(async () => {
          if (closed) return;
          try {
            await listen();
            onGap();
          } catch {
            retry(Math.min(5_000, delayMs * 2));
          }
        }, delayMs);
      };
      await listen();
    },
    async send(payload) {
      await publisher.publish(channel, payload);
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      subscriber?.close();
      publisher.close();
    },
  };
}
