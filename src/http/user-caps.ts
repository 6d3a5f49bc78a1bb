import { settings, type Config } from '../config';
import { serializeOn, type Tx, type Work } from '../db/work';
import { AppError } from './errors';

/**
 * Per-user caps on what a user creates (docs/security.md, "Caps on what a user creates"). Each
 * cap is a row of the settings table; reaching it is a 409 `CONFLICT` whose message says what is
 * full, names the setting and how to make room, and whose `data` names the cap for clients:
 * `{reason: "cap", cap: "PARLEY_…", max}`.
 */

/** The settings that are per-user caps (numbers). */
export type CapSetting = { [K in keyof Config]: Config[K] extends number ? K : never }[keyof Config];

/** The `data` of a cap's 409. */
export const capData = (setting: CapSetting, max: number) => ({ reason: 'cap', cap: settings[setting].env, max });

/**
 * The cap's 409: `held` says what the user has ("50 API keys"), `fix` how to make room.
 * `status` 413 for a cap on the size of one thing (a message too large whatever else is held).
 */
export function capReached(setting: CapSetting, max: number, held: string, fix: string, code: 'CONFLICT' | 'PAYLOAD_TOO_LARGE' = 'CONFLICT'): AppError {
  return new AppError(code, { message: `${held}: the most this server allows is ${max} (${settings[setting].env}). ${fix}`, data: capData(setting, max) });
}

/**
 * Inside the write that creates the row: queue behind the user's other creates of this kind (on
 * PostgreSQL; SQLite's one writer does that already), so two at once cannot both pass the cap,
 * then refuse when `count` already reaches `max`.
 */
export function* checkCap(tx: Tx, setting: CapSetting, userId: string, max: number, count: Work<number>, say: (n: number) => [held: string, fix: string]): Work<void> {
  yield* serializeOn(tx, `cap:${setting}:${userId}`);
  const n = yield* count;
  if (n >= max) throw capReached(setting, max, ...say(n));
}

/** A body past its row's limit (`bodyCap` in src/http/operation.ts): the cap's 413 instead of a bare one. Throws. */
export function bodyOverCap(err: unknown, setting: CapSetting, limit: number, config: Config): never {
  if (!(err instanceof AppError) || err.code !== 'PAYLOAD_TOO_LARGE') throw err;
  throw capReached(setting, config[setting], `This request is over ${limit} bytes`, 'Send a smaller one.', 'PAYLOAD_TOO_LARGE');
}
