import type { Logger } from '../log';
import { SHUTDOWN_REASON } from '../ai/ai.types';

export interface TaskSpec {
  /** The task's row id (for AI turns: the response id). */
  id: string;
  userId: string;
  run(signal: AbortSignal): Promise<void>;
}

export interface TaskRunner {
  /** Whether one more task for this user fits under both caps. */
  hasCapacity(userId: string): boolean;
  /** Start a task now (the caller checked capacity; resumed tasks skip the check). */
  start(task: TaskSpec): void;
  isRunning(id: string): boolean;
  /** The ids of the tasks running now. */
  runningIds(): string[];
  /** Abort a running task with `reason` and wait for it to settle; false when it was not running. */
  cancel(id: string, reason?: unknown): Promise<boolean>;
  /** Abort everything with SHUTDOWN_REASON (rows stay `in_progress` for the next start) and wait. */
  shutdown(): Promise<void>;
}

interface Running {
  userId: string;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * The in-process background runner. A task is a row in SQLite (its owner writes the row's
 * status); the runner only holds what is running right now, caps concurrency per user and
 * overall, isolates each task's failure, and stops everything on shutdown.
 */
export function createTaskRunner(opts: { maxPerUser: number; maxTotal: number; log: Logger }): TaskRunner {
  const running = new Map<string, Running>();
  const perUser = new Map<string, number>();
  return {
    hasCapacity: (userId) => running.size < opts.maxTotal && (perUser.get(userId) ?? 0) < opts.maxPerUser,
    start(task) {
      const controller = new AbortController();
      perUser.set(task.userId, (perUser.get(task.userId) ?? 0) + 1);
      const done = (async () => {
        try {
          await task.run(controller.signal);
        } catch (err) {
          opts.log.error('task failed', { taskId: task.id, cause: err instanceof Error ? err.message : String(err) });
        } finally {
          running.delete(task.id);
          const n = (perUser.get(task.userId) ?? 1) - 1;
          if (n > 0) perUser.set(task.userId, n);
          else perUser.delete(task.userId);
        }
      })();
      running.set(task.id, { userId: task.userId, controller, done });
    },
    isRunning: (id) => running.has(id),
    runningIds: () => [...running.keys()],
    async cancel(id, reason = 'cancelled') {
      const r = running.get(id);
      if (!r) return false;
      r.controller.abort(reason);
      await r.done;
      return true;
    },
    async shutdown() {
      const all = [...running.values()];
      for (const r of all) r.controller.abort(SHUTDOWN_REASON);
      await Promise.all(all.map((r) => r.done));
    },
  };
}
