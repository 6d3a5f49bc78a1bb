import type { Lifecycle } from '../lifecycle';

/** A stream the ticker can ask for a heartbeat. */
export interface Beating {
  /** Called once per tick: send a heartbeat if nothing went out since the previous tick. */
  beat(): void;
}

/**
 * One interval for every open event stream of an app, instead of a timer per stream: with
 * thousands of idle streams the per-stream timers were most of the heartbeat cost (bench figure 3).
 * Each stream decides on its own whether it was quiet for a whole tick; the ticker only walks the
 * set. The interval runs only while a stream is registered, so an idle app holds no timer, and it
 * stops for good at shutdown.
 */
export interface HeartbeatTicker {
  add(stream: Beating): void;
  remove(stream: Beating): void;
  /** Streams registered now (tests check that closed streams leave). */
  readonly size: number;
  stop(): void;
}

export function createHeartbeatTicker(intervalMs: number, lifecycle?: Lifecycle): HeartbeatTicker {
  const streams = new Set<Beating>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopped = false;

  const tick = () => {
    for (const s of streams) s.beat();
  };
  const halt = () => {
    clearInterval(timer);
    timer = undefined;
  };

  const ticker: HeartbeatTicker = {
    add(stream) {
      if (stopped) return;
      streams.add(stream);
      timer ??= setInterval(tick, intervalMs);
    },
    remove(stream) {
      streams.delete(stream);
      if (!streams.size) halt();
    },
    get size() {
      return streams.size;
    },
    stop() {
      stopped = true;
      streams.clear();
      halt();
    },
  };
  lifecycle?.onShutdown('heartbeats', () => ticker.stop());
  return ticker;
}
