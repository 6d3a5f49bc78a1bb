/**
 * The in-process topic broker. Everything that publishes or listens goes through this interface,
 * so a networked broker (Redis, NATS…) can implement it later without touching the domains.
 *
 * Delivery is synchronous and in publish order: a publisher that publishes right after its
 * transaction commits hands events to every listener in commit order.
 */
export type Listener<E = unknown> = (event: E) => void;

export interface Bus {
  publish(topic: string, event: unknown): void;
  /** Returns the unsubscribe function; calling it twice is harmless. */
  subscribe<E = unknown>(topic: string, listener: Listener<E>): () => void;
  /** Listeners currently subscribed to `topic` in this process (for metrics and tests). */
  listenerCount(topic: string): number;
  /**
   * Whether an event published on `topic` now may reach anyone: a listener here, or, on a bus
   * shared by several instances, one there (which this instance cannot know). A publisher may
   * skip building an event nobody can hear.
   */
  followed(topic: string): boolean;
  /**
   * Be told when events may have been lost on the way here (a bus shared by several instances
   * whose connection came back): listeners read what they missed from the database, where every
   * durable event is. The in-process bus loses nothing and never calls it. Returns the remover.
   */
  onGap(listener: () => void): () => void;
}

export function createMemoryBus(onListenerError: (topic: string, err: unknown) => void = () => {}): Bus {
  const topics = new Map<string, Set<Listener>>();
  return {
    publish(topic, event) {
      const set = topics.get(topic);
      if (!set) return;
      // A listener may unsubscribe (itself or another) while we deliver: iterate a snapshot.
      for (const listener of [...set]) {
        try {
          listener(event);
        } catch (err) {
          // One broken subscriber must never cost the others their event.
          onListenerError(topic, err);
        }
      }
    },
    subscribe<E>(topic: string, listener: Listener<E>) {
      let set = topics.get(topic);
      if (!set) topics.set(topic, (set = new Set()));
      set.add(listener as Listener);
      return () => {
        const current = topics.get(topic);
        if (!current?.delete(listener as Listener)) return;
        if (current.size === 0) topics.delete(topic);
      };
    },
    listenerCount: (topic) => topics.get(topic)?.size ?? 0,
    followed: (topic) => topics.has(topic),
    onGap: () => () => {},
  };
}
