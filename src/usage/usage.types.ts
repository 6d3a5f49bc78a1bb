/**
 * The seam between the callers of models (chat turns, research rounds, group answers, `/v1`,
 * embeddings, images, speech) and usage metering with its quotas (src/usage/). A caller reserves
 * before anything goes upstream — refused there when the user has neither allowance nor credits
 * left — and settles with what the provider reported once the call is over, or releases when the
 * call never reached the provider. `noopUsage` meters nothing and refuses nothing.
 */

export type UsageKind = 'chat' | 'research' | 'group' | 'title' | 'v1' | 'embeddings' | 'images' | 'stt' | 'tts' | 'video';

export interface UsageCaller {
  userId: string;
  /** The API key the request came with, when it came with one (usage is shown per key too). */
  apiKeyId?: string;
  /** The assistant that answered, when one did. */
  assistantId?: string;
  /** The user's subscription tier when the caller knows it (the principal's user); else it is read. */
  tier?: string;
  /** The AI turn (response) the calls belong to, when they do. */
  responseId?: string;
}

export interface UsageReport {
  connectionId?: string;
  /** The catalogue id (`<connection>/<model>`) or the upstream model id. */
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  cachedTokens?: number;
  reasoningTokens?: number;
  /** Seconds of audio transcribed, characters spoken, images made: what a non-token call is counted in. */
  units?: number;
  /** True when Parley counted because the provider reported nothing. */
  estimated: boolean;
}

/** What a call may use, or how to count it when asked. */
export type Estimate = UsageReport | (() => UsageReport);

export interface Reservation {
  readonly id: string;
}

/** A request refused before anything went upstream: `message` says which limit, `resetAt` when it resets (ms). */
export class QuotaError extends Error {
  constructor(
    message: string,
    readonly limit: string,
    readonly resetAt?: number,
  ) {
    super(message);
    this.name = 'QuotaError';
  }
}

export interface Usage {
  /**
   * Before an upstream call; throws `QuotaError` when the call may not be made. The estimate may
   * be given as a function, called only when a limit needs it: counting a long request's tokens is
   * work a user whose tier limits nothing should not pay for on every turn.
   */
  reserve(caller: UsageCaller, kind: UsageKind, estimate: Estimate): Promise<Reservation>;
  /**
   * One call of several under one reservation has ended (a turn's upstream round): what it used
   * is recorded and charged now, so a crash later loses none of it; the reservation stays open.
   */
  record?(reservation: Reservation, actual: UsageReport): Promise<void>;
  /** After the call: what it really used; the reservation is closed. */
  settle(reservation: Reservation, actual: UsageReport): Promise<void>;
  /** The call never reached the provider, or the calls under it are over: nothing more is held. */
  release(reservation: Reservation): Promise<void>;
  /**
   * A reservation of nothing, checked against nothing: for calls already under way (a turn
   * resumed after a restart), whose usage is still recorded and charged as far as the credits go.
   */
  unchecked?(caller: UsageCaller, kind: UsageKind): Reservation;
  /** An admin changed the tiers or prices: read them again (and tell the other instances). */
  changed?(): void;
}

const NONE: Reservation = { id: 'none' };

// `record` and `unchecked` came after the first callers of the seam: an implementation without
// them (a test's) still meters, each call settled on its own.

/** One call of several under a reservation ended: `record`, or `settle` where there is none. */
export const recordUsage = (usage: Usage, reservation: Reservation, actual: UsageReport): Promise<void> =>
  usage.record ? usage.record(reservation, actual) : usage.settle(reservation, actual);

/** `unchecked`, or a reservation of nothing where there is none. */
export const uncheckedReservation = (usage: Usage, caller: UsageCaller, kind: UsageKind): Reservation => usage.unchecked?.(caller, kind) ?? NONE;

export const noopUsage: Usage = {
  reserve: async () => NONE,
  record: async () => {},
  settle: async () => {},
  release: async () => {},
  unchecked: () => NONE,
};
