import type { SQL } from 'bun';
import type { BusTransport } from './transport';

export const PG_BUS_CHANNEL = 'parley_bus';

/**
 * The bus over PostgreSQL's LISTEN/NOTIFY, on Bun's built-in client: no new service beside the
 * database the instances already share. Bun's `listen` keeps one dedicated connection, reconnects
 * it with back-off and runs `onlisten` again each time, which is how a gap is noticed. NOTIFY
 * payloads are limited to 8,000 bytes; the cluster bus splits larger messages.
 */
export function pgTransport(sql: SQL, channel = PG_BUS_CHANNEL): BusTransport {
  let subscription: Awaited<ReturnType<SQL['listen']>> | undefined;
  return {
    maxPayloadBytes: 7_800,
    async start(onPayload, onGap) {
      let listened = 0;
      subscription = await sql.listen(channel, onPayload, () => {
        if (listened++ > 0) onGap();
      });
    },
    send: (payload) => sql.notify(channel, payload),
    async close() {
      await subscription?.unlisten();
    },
  };
}
