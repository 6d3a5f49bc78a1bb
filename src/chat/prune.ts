import type { AppDeps } from '../deps';
import { pruneResponseEvents } from './response.store';

const DAY_MS = 24 * 60 * 60 * 1000;
const EVERY_MS = 60 * 60 * 1000;

/**
 * Drop the stored events of responses finished more than PARLEY_EVENT_RETENTION_DAYS ago, at
 * start-up and hourly. Conversation items (the answers themselves) are kept.
 */
export function startEventPruning(deps: AppDeps): () => void {
  const run = () => {
    try {
      const n = pruneResponseEvents(deps.db, deps.now() - deps.config.eventRetentionDays * DAY_MS);
      if (n) deps.log.info('pruned response events', { events: n });
    } catch (err) {
      deps.log.error('pruning response events failed', { cause: err instanceof Error ? err.message : String(err) });
    }
  };
  run();
  const timer = setInterval(run, EVERY_MS);
  timer.unref?.();
  return () => clearInterval(timer);
}
