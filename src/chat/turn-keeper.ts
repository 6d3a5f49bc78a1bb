import type { AppDeps } from '../deps';
import { CANCEL_TOPIC, LEASE_LOST_REASON, renewTurns, TURN_RENEW_MS, TURN_SWEEP_MS } from './turn-leases';
import { resumeInterruptedResponses } from './respond';

/**
 * Keep this instance's AI turns and take over the dead ones' (src/chat/turn-leases.ts): every
 * TURN_RENEW_MS, renew the leases of the turns running here (a turn whose lease could not be
 * renewed stops without ending its row: another instance may run it now); every TURN_SWEEP_MS,
 * claim the unfinished turns nobody holds. Also runs the cancels asked on other instances for
 * turns running here. Returns the stopper.
 */
export function startTurnKeeper(
  deps: AppDeps,
  opts: {
    renewMs?: number;
    sweepMs?: number;
    /** More turns held by the same leases to take over (the /v1 door's background responses, src/openai-compat/). */
    sweeps?: ((deps: AppDeps) => Promise<unknown>)[];
  } = {},
): () => void {
  const renewMs = opts.renewMs ?? TURN_RENEW_MS;
  const offCancel = deps.bus.subscribe<{ responseId?: unknown }>(CANCEL_TOPIC, (message) => {
    const id = message?.responseId;
    if (typeof id === 'string' && deps.tasks.isRunning(id)) void deps.tasks.cancel(id);
  });
  let busy = false;
  let renewedAt = performance.now();
  const tick = async () => {
    if (busy || deps.lifecycle.stopping) return;
    busy = true;
    try {
      if (performance.now() - renewedAt >= renewMs) {
        // Taken before the renewal: a turn started after it has a lease the renewal did not see.
        const running = deps.tasks.runningIds();
        const held = await renewTurns(deps);
        renewedAt = performance.now();
        for (const id of running) if (!held.has(id) && deps.tasks.isRunning(id)) void deps.tasks.cancel(id, LEASE_LOST_REASON);
      }
      const taken = await resumeInterruptedResponses(deps, 'orphan');
      if (taken.resumed || taken.failed) deps.log.info('took over interrupted responses', taken);
      for (const sweep of opts.sweeps ?? []) await sweep(deps);
    } catch (err) {
      deps.log.warn('turn leases could not be renewed or claimed', { cause: err instanceof Error ? err.message : String(err) });
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), Math.min(renewMs, opts.sweepMs ?? TURN_SWEEP_MS));
  return () => {
    clearInterval(timer);
    offCancel();
  };
}
