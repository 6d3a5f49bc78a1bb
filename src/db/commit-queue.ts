import type { Db } from './connection';

/**
 * Group commit: writes queued during one turn of the event loop share one transaction.
 *
 * A commit costs more than the writes it makes durable (WAL frames for every page touched, the
 * full-text index flushing a segment): sending a group message spent about a third of its time
 * in COMMIT (bench/RESULTS.md, change 9). When many clients write at once, the requests that
 * arrive together are queued and committed together on the next turn; a lone request waits one
 * turn at most. A caller's promise settles only after its transaction has committed, so an
 * answered write is as durable as before.
 *
 * Each job runs inside its own savepoint: a job that throws rolls back alone and its caller gets
 * the error, the others commit. `afterCommit` callbacks run right after the commit, in queue
 * order and before any other code, so events numbered inside the jobs are published in order
 * (one that throws rejects its job's promise, although its write is committed).
 */
interface Job<T> {
  work: () => T;
  afterCommit?: (value: T) => void;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

interface Queue {
  jobs: Job<any>[];
  scheduled: boolean;
}

const queues = new WeakMap<Db, Queue>();

/**
 * Run `work` in a write transaction shared with the other writes queued this turn; resolves with
 * its result once committed. `work` must be synchronous and must not start its own `BEGIN`
 * (a nested `writeTx` is fine: it becomes a savepoint).
 */
export function queuedWrite<T>(db: Db, work: () => T, afterCommit?: (value: T) => void): Promise<T> {
  let queue = queues.get(db);
  if (!queue) queues.set(db, (queue = { jobs: [], scheduled: false }));
  const q = queue;
  return new Promise<T>((resolve, reject) => {
    q.jobs.push({ work, afterCommit, resolve, reject });
    if (!q.scheduled) {
      q.scheduled = true;
      // setImmediate, not a microtask: requests read off the sockets in the same poll phase
      // all queue their writes before the batch runs.
      setImmediate(() => flushQueue(db, q));
    }
  });
}

/** Commit what is queued now (shutdown calls this before closing the database). */
export function drainWrites(db: Db): void {
  const queue = queues.get(db);
  if (queue?.jobs.length) flushQueue(db, queue);
}

const MAX_BATCH = 256;

function flushQueue(db: Db, queue: Queue): void {
  queue.scheduled = false;
  while (queue.jobs.length) runBatch(db.$client, queue.jobs.splice(0, MAX_BATCH));
}

type Sqlite = Db['$client'];
export type Outcome<V = unknown> = { ok: true; value: V } | { ok: false; err: unknown };

/**
 * Answer each job of a committed batch: its error, or its after-commit step and then its value.
 * The after-commit steps run in queue order, right after the commit; one that throws rejects its
 * job, whose write is committed all the same (its caller must hear that what follows failed).
 */
export function settleBatch<V>(
  batch: { resolve(value: unknown): void; reject(err: unknown): void }[],
  outcomes: Outcome<V>[],
  afterCommit: (value: V, job: number) => void,
): void {
  batch.forEach((job, i) => {
    const outcome = outcomes[i]!;
    if (!outcome.ok) return job.reject(outcome.err);
    try {
      afterCommit(outcome.value, i);
    } catch (err) {
      return job.reject(err);
    }
    job.resolve(outcome.value);
  });
}

/**
 * One transaction for the batch. Nothing may escape: this runs from `setImmediate`, where a
 * throw would take the server down. Some SQLite errors (disk full, I/O error, out of memory)
 * roll back the whole transaction rather than the statement: then the jobs that had succeeded
 * lost their writes too, and every job of the batch fails with that error (none was answered).
 */
function runBatch(sqlite: Sqlite, batch: Job<unknown>[]): void {
  const outcomes: Outcome[] = [];
  try {
    sqlite.run('BEGIN IMMEDIATE');
    for (const job of batch) {
      sqlite.run('SAVEPOINT job');
      try {
        outcomes.push({ ok: true, value: job.work() });
        sqlite.run('RELEASE job');
      } catch (err) {
        // Without a transaction there is no savepoint to go back to: the batch is lost.
        if (!sqlite.inTransaction) throw err;
        sqlite.run('ROLLBACK TO job');
        sqlite.run('RELEASE job');
        outcomes.push({ ok: false, err });
      }
    }
    sqlite.run('COMMIT');
  } catch (err) {
    try {
      if (sqlite.inTransaction) sqlite.run('ROLLBACK');
    } catch {
      // the connection is unusable (closed, I/O error): the next batch's BEGIN says so
    }
    for (const job of batch) job.reject(err);
    return;
  }
  settleBatch(batch, outcomes, (value, i) => batch[i]!.afterCommit?.(value));
}
