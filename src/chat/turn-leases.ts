import type { AppDeps } from '../deps';
import type { Tx, Work } from '../db/work';
import { findLease, releaseLease, renewLeases, takeOverLease, tryAcquireLease } from '../tasks/lease.store';

/*
 * Which instance runs an AI turn (docs/scaling.md, "Background work"): the one holding the
 * lease `response:<id>` in the database. The instance that starts a turn takes it in the same
 * transaction that creates the response, renews every lease it holds every TURN_RENEW_MS, and
 * lets it go with the turn's final state. When an instance dies its leases expire after
 * TURN_LEASE_MS; every instance looks for such turns every TURN_SWEEP_MS and one takes each over
 * (resumes it where the provider allows, else ends it with the restart error). A takeover
 * therefore starts at most TAKEOVER_BOUND_MS after the owner's last renewal.
 */

export const TURN_LEASE_MS = 15_000;
export const TURN_RENEW_MS = 5_000;
/** How often each instance looks for turns to take over: a cheap indexed read. */
export const TURN_SWEEP_MS = 1_000;
export const TAKEOVER_BOUND_MS = TURN_LEASE_MS + TURN_SWEEP_MS;
/** The reason a turn's task is stopped when its lease was lost (renewal failed, and another instance may have it). */
export const LEASE_LOST_REASON = 'the turn lease was lost';
/** Bus topic: a cancel asked on another instance reaches the turn's owner. */
export const CANCEL_TOPIC = 'turn:cancel';

const PREFIX = 'response:';
export const turnLeaseName = (responseId: string) => `${PREFIX}${responseId}`;

/** Take a new turn's lease (inside the transaction that creates it). */
export function* holdTurn(tx: Tx, deps: Pick<AppDeps, 'instanceId' | 'now'>, responseId: string): Work<boolean> {
  return (yield* tryAcquireLease(tx, turnLeaseName(responseId), deps.instanceId, TURN_LEASE_MS, deps.now())) !== undefined;
}

/**
 * Take the lease of an interrupted turn: one nobody holds (`orphan`), or, on SQLite at start,
 * whoever held it (that was this server's previous process). False when another instance won it.
 */
export function* claimTurn(tx: Tx, deps: Pick<AppDeps, 'instanceId' | 'now'>, responseId: string, mode: 'orphan' | 'any'): Work<boolean> {
  if (mode === 'any') {
    yield* takeOverLease(tx, turnLeaseName(responseId), deps.instanceId, TURN_LEASE_MS, deps.now());
    return true;
  }
  return yield* holdTurn(tx, deps, responseId);
}

export function* letTurnGo(tx: Tx, deps: Pick<AppDeps, 'instanceId'>, responseId: string): Work<void> {
  yield* releaseLease(tx, turnLeaseName(responseId), deps.instanceId);
}

/** Renew this instance's turn leases; returns the ids of the turns it still holds. */
export async function renewTurns(deps: Pick<AppDeps, 'store' | 'instanceId' | 'now'>): Promise<Set<string>> {
  const names = await deps.store.write((tx) => renewLeases(tx, deps.instanceId, PREFIX, TURN_LEASE_MS, deps.now()));
  return new Set(names.map((n) => n.slice(PREFIX.length)));
}

/** How long a cancel asked here waits for the instance running the turn to end it. */
const REMOTE_CANCEL_WAIT_MS = 5_000;

/**
 * Cancel a turn where it runs: its task here, or, through the bus, on the instance that holds its
 * lease, waiting a moment for `ended` (its row) to say so. False when no task and no live instance
 * holds it (its owner died and nobody took it over yet): the caller ends the row itself.
 */
export async function cancelWhereRunning(deps: Pick<AppDeps, 'tasks' | 'store' | 'instanceId' | 'now' | 'bus'>, responseId: string, ended: () => Promise<boolean>): Promise<boolean> {
  if (await deps.tasks.cancel(responseId)) return true;
  const lease = await deps.store.read((tx) => findLease(tx, turnLeaseName(responseId)));
  if (!lease || lease.holder === deps.instanceId || lease.expiresAt <= deps.now()) return false;
  deps.bus.publish(CANCEL_TOPIC, { responseId });
  const until = Date.now() + REMOTE_CANCEL_WAIT_MS;
  while (Date.now() < until) {
    if (await ended()) break;
    await Bun.sleep(50);
  }
  return true;
}
