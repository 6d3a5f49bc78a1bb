import type { AppDeps } from '../deps';
import type { Principal } from '../auth/authenticate';
import { AiError, type AiMessage, type CallUsage } from '../ai/ai.types';
import { requestTokens } from '../ai/call-usage';
import { QuotaError, recordUsage, uncheckedReservation, type Reservation, type UsageCaller, type UsageKind, type UsageReport } from './usage.types';

/** The API key a request came with, for usage by key (undefined for a session). */
export const apiKeyOf = (principal: Principal): string | undefined => (principal.credential.kind === 'apiKey' ? principal.credential.keyId : undefined);

/** The model calls of one piece of work (an AI turn, a group answer): each recorded as it ends, the reservation let go at the end. */
export interface CallMeter {
  /** Hand to the provider as `onUsage`: records one call, with the connection and model. */
  onUsage: (usage: CallUsage) => void;
  /** Every call recorded (their writes committed), and what the reservation still held let go. */
  close(): Promise<void>;
}

/**
 * Reserve for a piece of work that makes model calls through a chat provider, before anything
 * goes upstream: its input counted from the messages, its output assumed
 * (`PARLEY_USAGE_ESTIMATE_OUTPUT_TOKENS`). Over a limit, an `AiError` with the quota's sentence,
 * which ends a turn's stream as its `error` event. `resumed`: the work was under way before a
 * restart, so it is not checked again (its usage is still recorded and charged).
 */
export async function meterCalls(
  deps: Pick<AppDeps, 'usage' | 'config' | 'log'>,
  opts: { caller: UsageCaller; kind: UsageKind; target: { id: string; connection: { id: string } }; messages: AiMessage[]; resumed?: boolean },
): Promise<CallMeter> {
  const where = { connectionId: opts.target.connection.id, model: opts.target.id };
  let reservation: Reservation;
  if (opts.resumed) reservation = uncheckedReservation(deps.usage, opts.caller, opts.kind);
  else
    try {
      // Counted only when a limit needs it (most users' tiers limit nothing).
      const estimate = () => ({ ...where, inputTokens: requestTokens(opts.messages), outputTokens: deps.config.usageEstimateOutputTokens, estimated: true });
      reservation = await deps.usage.reserve(opts.caller, opts.kind, estimate);
    } catch (err) {
      if (err instanceof QuotaError) throw new AiError(err.message);
      throw err;
    }
  const pending = new Set<Promise<void>>();
  return {
    onUsage(usage) {
      const p = recordUsage(deps.usage, reservation, { ...where, ...usage })
        .catch((err) => deps.log.error('usage could not be recorded', { ...where, userId: opts.caller.userId, cause: err instanceof Error ? err.message : String(err) }))
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    async close() {
      await Promise.all(pending);
      await deps.usage.release(reservation).catch((err) => deps.log.error('a usage reservation could not be released', { cause: err instanceof Error ? err.message : String(err) }));
    },
  };
}

/**
 * One call that is not a chat provider's (an embeddings request, an image, a transcription, a
 * spoken text): reserved before it goes upstream (a `QuotaError` when over a limit), then settled
 * with what `run` says it used, or released when it failed. The usage write is not awaited: the
 * caller's answer does not wait for it.
 */
export async function meterCall<T>(
  deps: Pick<AppDeps, 'usage' | 'log'>,
  opts: { caller: UsageCaller; kind: UsageKind; estimate: UsageReport },
  run: () => Promise<{ value: T; usage: UsageReport }>,
): Promise<T> {
  const reservation = await deps.usage.reserve(opts.caller, opts.kind, opts.estimate);
  let done: { value: T; usage: UsageReport };
  try {
    done = await run();
  } catch (err) {
    void deps.usage.release(reservation).catch(() => undefined);
    throw err;
  }
  void deps.usage.settle(reservation, done.usage).catch((err) =>
    deps.log.error('usage could not be recorded', { kind: opts.kind, userId: opts.caller.userId, cause: err instanceof Error ? err.message : String(err) }),
  );
  return done.value;
}
