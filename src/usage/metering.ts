import type { UsageTierRow } from '../db/schema';
import type { Store, Tx, Work } from '../db/work';
import { serializeOn } from '../db/work';
import type { Bus } from '../pubsub/bus';
import type { Logger } from '../log';
import { newId } from '../ids';
import { findUserById } from '../account/account.store';
import { bonusMicroOf, chargeUsage } from '../credits/credit.store';
import { QuotaError, type Reservation, type Usage, type UsageCaller, type UsageKind, type UsageReport } from './usage.types';
import { addToDay, deleteReservation, findReservation, heldBy, insertReservation, insertUsageRecord, listPrices, listTiers, setReservationHeld, usedSince } from './usage.store';
import { allowanceImagesOf, allowanceTokensOf, excessCost, TOKEN_KINDS, whole, type Price } from './pricing';
import { dayOf, perPeriod, periodOf, readableTime, type Period } from './periods';

/** Topic on which an admin's change of tiers or prices is told to every instance. */
export const USAGE_TOPIC = 'usage-settings';
/** How long tiers and prices read are used before they are read again (an admin command beside a SQLite server is not on the bus). */
const SETTINGS_TTL_MS = 10_000;
/**
 * How long a reservation holds a user's allowance and credits when its call never settles (the
 * process died): then it lapses, and the retention pass deletes it.
 */
export const RESERVATION_TTL_MS = 60 * 60_000;

export interface UsageSettings {
  tiers: Map<string, UsageTierRow>;
  prices: Map<string, Price>;
  /** Whether any tier limits anything: when none does, nothing is checked or held. */
  limited: boolean;
}

/** A reservation as the metering service keeps it; callers see its `id` only. */
interface Held extends Reservation {
  caller: UsageCaller;
  kind: UsageKind;
  /** The caller's tier when it limits this kind of call (checked and charged), else undefined. */
  tier?: UsageTierRow;
  /** A reservation row was written (a limited call); `unchecked` ones resolve their tier when they record. */
  row: boolean;
  unchecked?: boolean;
}

export interface Metering extends Usage {
  /** Tiers and prices as this instance holds them. */
  settings(): Promise<UsageSettings>;
  /** After an admin's change: read them again here, and tell the other instances. */
  changed(): void;
}

const limits = (t: UsageTierRow) => t.tokens !== null || t.researchRuns !== null || t.images !== null;
/** Whether a tier's allowances concern a kind of call at all. */
const touches = (t: UsageTierRow, kind: UsageKind) =>
  (t.tokens !== null && TOKEN_KINDS.has(kind)) || (t.researchRuns !== null && kind === 'research') || (t.images !== null && kind === 'images');

const credits = (micro: number) => (Math.max(0, micro) / 1_000_000).toLocaleString('en-US', { maximumFractionDigits: 6 });
const count = (n: number) => n.toLocaleString('en-US');

/**
 * Usage metering and quotas (docs/usage.md): `deps.usage`. A call of a user whose tier limits
 * nothing (every tier, until an admin sets allowances) is only recorded: no reservation, no read,
 * one row written with the group commit. A limited call reserves what it may use before it goes
 * upstream, under a lock on the user (PostgreSQL: an advisory lock, across instances; SQLite: its
 * one writer), and each call it makes is charged when it ends.
 */
export function createUsage(deps: { store: Store; bus: Bus; now: () => number; instanceId: string; log: Logger }): Metering {
  const { store, now } = deps;
  let cached: Promise<UsageSettings> | undefined;
  let loadedAt = 0;
  let generation = 0;

  const load = () =>
    store.read(function* (tx) {
      return { tiers: yield* listTiers(tx), prices: yield* listPricesOf(tx) };
    }).then(({ tiers, prices }): UsageSettings => ({ tiers: new Map(tiers.map((t) => [t.name, t])), prices, limited: tiers.some(limits) }));

  const settings = (): Promise<UsageSettings> => {
    if (cached && now() - loadedAt > SETTINGS_TTL_MS) {
      // Read again behind the answer: a call never waits for it.
      const gen = generation;
      loadedAt = now();
      load().then((s) => {
        if (gen === generation) cached = Promise.resolve(s);
      }, () => {});
    }
    if (!cached) {
      loadedAt = now();
      const next = load();
      cached = next;
      next.catch(() => {
        if (cached === next) cached = undefined;
      });
    }
    return cached;
  };
  const drop = () => {
    generation++;
    cached = undefined;
  };
  deps.bus.subscribe<{ from?: string }>(USAGE_TOPIC, (e) => {
    if (e?.from !== deps.instanceId) drop();
  });
  deps.bus.onGap(drop);

  /** The caller's tier when it limits `kind`; the user's row is read only when some tier limits anything and the caller did not say. */
  async function limitingTier(caller: UsageCaller, kind: UsageKind): Promise<UsageTierRow | undefined> {
    const s = await settings();
    if (!s.limited) return undefined;
    const name = caller.tier ?? (await store.read((tx) => findUserById(tx, caller.userId)))?.subscriptionTier;
    const tier = name === undefined ? undefined : s.tiers.get(name);
    return tier && touches(tier, kind) ? tier : undefined;
  }

  // Every usage write on SQLite shares the group commit with the turn's events; on PostgreSQL a
  // write of its own, since a shared transaction would lock users' rows in no fixed order.
  const write = <R>(work: (tx: Tx) => Work<R>) => (store.dialect === 'sqlite' ? store.queued(work) : store.write(work));

  async function recordCall(held: Held, report: UsageReport, close: boolean): Promise<void> {
    const at = now();
    const tier = held.unchecked ? await limitingTier(held.caller, held.kind) : held.tier;
    const price = tier && report.model ? (await settings()).prices.get(report.model) : undefined;
    await write(function* (tx) {
      const row = recordOf(held, report, at);
      if (!tier) {
        yield* insertUsageRecord(tx, row);
        yield* addToDay(tx, row.userId, dayOf(at), { tokens: allowanceTokensOf(held.kind, report), researchRuns: 0, images: allowanceImagesOf(held.kind, report) });
      } else yield* chargeCall(tx, held, tier, price, report, row, at);
      if (close && held.row) yield* deleteReservation(tx, held.id);
    });
  }

  return {
    settings,
    changed() {
      drop();
      deps.bus.publish(USAGE_TOPIC, { from: deps.instanceId });
    },
    async reserve(caller, kind, estimate) {
      const tier = await limitingTier(caller, kind);
      if (!tier) return { id: 'free', caller, kind, row: false } satisfies Held;
      const counted = typeof estimate === 'function' ? estimate() : estimate;
      const price = counted.model ? (await settings()).prices.get(counted.model) : undefined;
      const id = newId();
      const at = now();
      await store.write((tx) => reserveFor(tx, { id, caller, kind, tier, price, estimate: counted, model: counted.model }, at));
      return { id, caller, kind, tier, row: true } satisfies Held;
    },
    record: (reservation, actual) => (isHeld(reservation) ? recordCall(reservation, actual, false) : Promise.resolve()),
    settle: (reservation, actual) => (isHeld(reservation) ? recordCall(reservation, actual, true) : Promise.resolve()),
    async release(reservation) {
      if (isHeld(reservation) && reservation.row) await write((tx) => deleteReservation(tx, reservation.id));
    },
    unchecked: (caller, kind) => ({ id: 'unchecked', caller, kind, row: false, unchecked: true }) satisfies Held,
  };
}

function* listPricesOf(tx: Tx): Work<Map<string, Price>> {
  return new Map((yield* listPrices(tx)).map((p) => [p.model, p]));
}

const isHeld = (r: Reservation): r is Held => typeof (r as Held).caller?.userId === 'string';

function recordOf(held: Held, report: UsageReport, at: number) {
  return {
    id: newId(),
    userId: held.caller.userId,
    apiKeyId: held.caller.apiKeyId ?? null,
    connectionId: report.connectionId ?? null,
    model: report.model ?? '',
    assistantId: held.caller.assistantId ?? null,
    kind: held.kind,
    inputTokens: whole(report.inputTokens),
    outputTokens: whole(report.outputTokens),
    cachedTokens: whole(report.cachedTokens),
    reasoningTokens: whole(report.reasoningTokens),
    units: whole(report.units),
    creditsMicro: 0,
    estimated: report.estimated,
    responseId: held.caller.responseId ?? null,
    createdAt: at,
  };
}

interface ReserveInput {
  id: string;
  caller: UsageCaller;
  kind: UsageKind;
  tier: UsageTierRow;
  price: Price | undefined;
  estimate: UsageReport;
  model?: string;
}

/**
 * Hold what the call may use: the part of its estimate the allowance has left, and the credits
 * for the rest; or refuse with a sentence saying which limit and when it resets. Runs under the
 * user's lock, so calls at once see each other's holds.
 */
function* reserveFor(tx: Tx, r: ReserveInput, at: number): Work<void> {
  const userId = r.caller.userId;
  yield* serializeOn(tx, `usage:${userId}`);
  const { start, end } = periodOf(at, r.tier.period as Period);
  const used = yield* usedSince(tx, userId, dayOf(start));
  const held = yield* heldBy(tx, userId, at);
  const balance = (yield* bonusMicroOf(tx, userId)) - held.creditsMicro;
  const paid = r.kind === 'research' && r.tier.researchRuns !== null && used.researchRuns >= r.tier.researchRuns;
  const tokens = allowanceTokensOf(r.kind, r.estimate);
  const images = allowanceImagesOf(r.kind, r.estimate);
  const covered = {
    tokens: paid ? 0 : Math.min(tokens, left(r.tier.tokens, used.tokens + held.tokens)),
    images: Math.min(images, left(r.tier.images, used.images + held.images)),
  };
  let need = 0;
  if (paid || covered.tokens < tokens || covered.images < images) {
    const limit = paid ? 'researchRuns' : covered.tokens < tokens ? 'tokens' : 'images';
    const spent = allowanceSentence(r.tier, limit, { tokens, images }, { tokens: covered.tokens, images: covered.images });
    if (!r.price) throw new QuotaError(`${spent}, and ${r.model ? `the model ${r.model}` : 'this service'} cannot be paid for with bonus credits. It resets at ${readableTime(end)}.`, limit, end);
    need = excessCost(r.price, r.estimate, r.kind, covered);
    if (need > balance)
      throw new QuotaError(`${spent}, and your bonus credits (${credits(balance)}) do not cover this request (about ${credits(need)}). It resets at ${readableTime(end)}.`, limit, end);
  }
  // A run counts from its start, whether or not it is paid.
  if (r.kind === 'research') yield* addToDay(tx, userId, dayOf(at), { tokens: 0, researchRuns: 1, images: 0 });
  yield* insertReservation(tx, { id: r.id, userId, tokens: covered.tokens, images: covered.images, creditsMicro: need, paid, createdAt: at, expiresAt: at + RESERVATION_TTL_MS });
}

const left = (allowance: number | null, used: number) => (allowance === null ? Number.POSITIVE_INFINITY : Math.max(0, allowance - used));

/** "Your FREE allowance of 10,000 tokens a day is used up" (or has too few left for this request). */
function allowanceSentence(tier: UsageTierRow, limit: 'tokens' | 'images' | 'researchRuns', wanted: { tokens: number; images: number }, covered: { tokens: number; images: number }): string {
  const per = perPeriod(tier.period as Period);
  const of = limit === 'tokens' ? `${count(tier.tokens!)} tokens` : limit === 'images' ? `${count(tier.images!)} images` : `${count(tier.researchRuns!)} research runs`;
  const partly = limit === 'tokens' ? covered.tokens > 0 : limit === 'images' ? covered.images > 0 : false;
  if (partly) return `Your ${tier.name} allowance of ${of} ${per} has ${count(covered.tokens || covered.images)} left, fewer than this request may use (about ${count(limit === 'tokens' ? wanted.tokens : wanted.images)})`;
  return `Your ${tier.name} allowance of ${of} ${per} is used up`;
}

/**
 * Record a call of a limited user and charge its part past the allowance (at most what the
 * balance has: a call that used more than it reserved can empty it, never overdraw it), taking
 * what it used out of its reservation.
 */
function* chargeCall(tx: Tx, held: Held, tier: UsageTierRow, price: Price | undefined, report: UsageReport, row: ReturnType<typeof recordOf>, at: number): Work<void> {
  const userId = held.caller.userId;
  yield* serializeOn(tx, `usage:${userId}`);
  const mine = held.row ? yield* findReservation(tx, held.id) : undefined;
  const used = yield* usedSince(tx, userId, dayOf(periodOf(at, tier.period as Period).start));
  const others = yield* heldBy(tx, userId, at, mine?.id);
  const tokens = allowanceTokensOf(held.kind, report);
  const images = allowanceImagesOf(held.kind, report);
  const covered = {
    tokens: mine?.paid ? 0 : Math.min(tokens, left(tier.tokens, used.tokens + others.tokens)),
    images: Math.min(images, left(tier.images, used.images + others.images)),
  };
  const cost = price ? excessCost(price, report, held.kind, covered) : 0;
  const charged = Math.max(0, Math.min(cost, (yield* bonusMicroOf(tx, userId)) - others.creditsMicro));
  yield* insertUsageRecord(tx, { ...row, creditsMicro: charged });
  // A paid research run's tokens are bought, not taken from the token allowance.
  yield* addToDay(tx, userId, dayOf(at), { tokens: mine?.paid ? 0 : tokens, researchRuns: 0, images });
  yield* chargeUsage(tx, userId, dayOf(at), charged, at);
  if (mine)
    yield* setReservationHeld(tx, mine.id, {
      tokens: Math.max(0, mine.tokens - tokens),
      images: Math.max(0, mine.images - images),
      creditsMicro: Math.max(0, mine.creditsMicro - charged),
    });
}
