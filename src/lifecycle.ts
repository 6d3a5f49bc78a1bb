/**
 * The shutdown registry. `startServer` owns one; whatever must finish cleanly when the process is
 * asked to stop (open event streams, the task runner, the pub/sub bus) either listens to `signal`
 * or registers a hook with `onShutdown`. `shutdown()` aborts the signal first (streams send their
 * final frame at once), then runs every hook concurrently, each bounded by the deadline, so one
 * stuck hook cannot keep the process from exiting within the supervisor's patience.
 */

export type ShutdownHook = () => void | Promise<void>;

export interface HookResult {
  name: string;
  ok: boolean;
  ms: number;
  error?: string;
}

export interface Lifecycle {
  /** Aborted when shutdown begins. Long-running work races against it. */
  readonly signal: AbortSignal;
  readonly stopping: boolean;
  /** Register a hook run at shutdown (e.g. the task runner's checkpoint). Returns an unregister function. */
  onShutdown(name: string, fn: ShutdownHook): () => void;
  /** Abort `signal`, then run the hooks (concurrently, each bounded by `timeoutMs`). Idempotent. */
  shutdown(timeoutMs?: number): Promise<HookResult[]>;
}

export function createLifecycle(): Lifecycle {
  const controller = new AbortController();
  const hooks = new Map<symbol, { name: string; fn: ShutdownHook }>();
  let running: Promise<HookResult[]> | undefined;

  const runHook = async (name: string, fn: ShutdownHook, timeoutMs: number): Promise<HookResult> => {
    const started = performance.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`did not finish within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([Promise.resolve().then(fn), timeout]);
      return { name, ok: true, ms: Math.round(performance.now() - started) };
    } catch (err) {
      return { name, ok: false, ms: Math.round(performance.now() - started), error: String((err as Error)?.message ?? err) };
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    get signal() {
      return controller.signal;
    },
    get stopping() {
      return controller.signal.aborted;
    },
    onShutdown(name, fn) {
      const id = Symbol(name);
      hooks.set(id, { name, fn });
      return () => void hooks.delete(id);
    },
    shutdown(timeoutMs = 3000) {
      return (running ??= (async () => {
        controller.abort(new Error('server shutting down'));
        return Promise.all([...hooks.values()].map((h) => runHook(h.name, h.fn, timeoutMs)));
      })());
    },
  };
}
