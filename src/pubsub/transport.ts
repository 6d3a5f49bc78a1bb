/**
 * How a cluster bus (src/pubsub/cluster-bus.ts) reaches the other instances: one channel that
 * every instance both sends to and listens on. PostgreSQL's LISTEN/NOTIFY and Redis pub/sub are
 * the two; both deliver a sender's payloads in the order it sent them, and neither keeps a
 * payload for an instance that was not listening when it was sent.
 */
export interface BusTransport {
  /** The largest payload one send may carry, in UTF-8 bytes (PostgreSQL: under 8,000). */
  readonly maxPayloadBytes: number;
  /**
   * Start listening. `onGap` runs each time the listening connection came back after a loss:
   * whatever was sent meanwhile is lost, and listeners must read what they missed from the
   * database, where every durable event is stored.
   */
  start(onPayload: (payload: string) => void, onGap: () => void): Promise<void>;
  send(payload: string): Promise<void>;
  close(): Promise<void>;
}
