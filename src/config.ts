/**
 * The one table of settings. Every row names its environment variable, its CLI flag (if any),
 * its default, a line of documentation and a parser. `loadConfig` is the only place in Parley
 * that reads the environment; everything else receives the parsed `Config`.
 * docs/configuration.md is generated from this table (`bun run scripts/gen-config-docs.ts`)
 * and a test fails when the two drift apart.
 */

export class ConfigError extends Error {}

type Parser<T> = (raw: string, name: string) => T;

const str: Parser<string> = (raw) => raw;
const optStr: Parser<string | undefined> = (raw) => (raw === '' ? undefined : raw);
const int =
  (min: number, max = Number.MAX_SAFE_INTEGER): Parser<number> =>
  (raw, name) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
    return n;
  };
const bool: Parser<boolean> = (raw, name) => {
  const v = raw.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};
const oneOf =
  <const T extends string>(...values: T[]): Parser<T> =>
  (raw, name) => {
    if ((values as string[]).includes(raw)) return raw as T;
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  };
const list: Parser<string[]> = (raw) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export interface Setting<T> {
  env: string;
  flag?: string;
  default: string;
  doc: string;
  parse: Parser<T>;
  /** Hidden from generated docs (none yet); secrets are still documented, their values never logged. */
  secret?: boolean;
}

const setting = <T>(s: Setting<T>) => s;

export const settings = {
  dataDir: setting({
    env: 'PARLEY_DATA_DIR',
    flag: '--data-dir',
    default: './data',
    doc: 'Directory holding the SQLite database (parley.db) and its WAL files.',
    parse: str,
  }),
  host: setting({
    env: 'PARLEY_HOST',
    flag: '--host',
    default: '127.0.0.1',
    doc: 'Address the HTTP server listens on. Use 0.0.0.0 to listen on every interface.',
    parse: str,
  }),
  port: setting({
    env: 'PARLEY_PORT',
    flag: '--port',
    default: '8787',
    doc: 'TCP port the HTTP server listens on (0 picks a free port).',
    parse: int(0, 65535),
  }),
  env: setting({
    env: 'PARLEY_ENV',
    default: 'production',
    doc: '`production` or `development`. Development enables test-only operations such as `credits/grantAdReward`.',
    parse: oneOf('production', 'development'),
  }),
  internalEmailDomain: setting({
    env: 'PARLEY_INTERNAL_EMAIL_DOMAIN',
    default: '',
    doc: 'E-mail domain of internal users (e.g. `example.org`); they may call internal test operations. Empty: nobody.',
    parse: (raw) => optStr(raw.trim().toLowerCase().replace(/^@/, ''), 'PARLEY_INTERNAL_EMAIL_DOMAIN'),
  }),
  cookieSecure: setting({
    env: 'PARLEY_COOKIE_SECURE',
    default: 'false',
    doc: 'Mark the session cookie `Secure` (set to true when Parley is served over HTTPS).',
    parse: bool,
  }),
  logLevel: setting({
    env: 'PARLEY_LOG_LEVEL',
    default: 'info',
    doc: '`debug`, `info`, `warn`, `error` or `silent`. Request lines are logged at `info`.',
    parse: oneOf('debug', 'info', 'warn', 'error', 'silent'),
  }),
  maxBodyBytes: setting({
    env: 'PARLEY_MAX_BODY_BYTES',
    default: String(32 * 1024 * 1024),
    doc: 'Largest request body accepted, in bytes; larger bodies get 413 PAYLOAD_TOO_LARGE.',
    parse: int(1024),
  }),
  sessionTtlDays: setting({
    env: 'PARLEY_SESSION_TTL_DAYS',
    default: '30',
    doc: 'Sessions expire after this many days without use (sliding expiry).',
    parse: int(1, 3650),
  }),
  // --- group chats ---
  sseHeartbeatSeconds: setting({
    env: 'PARLEY_SSE_HEARTBEAT_S',
    default: '5',
    doc: 'Seconds between heartbeat comment lines on a quiet event stream (keeps proxies and idle timers from closing it).',
    parse: int(1, 3600),
  }),
  sseRetryMs: setting({
    env: 'PARLEY_SSE_RETRY_MS',
    default: '3000',
    doc: 'The `retry` value (milliseconds) sent on event frames: how long a client waits before reconnecting.',
    parse: int(0, 3_600_000),
  }),
  groupEventRetentionDays: setting({
    env: 'PARLEY_GROUP_EVENT_RETENTION_DAYS',
    default: '7',
    doc: 'Days a group chat event is kept for replay to clients that reconnect with `Last-Event-ID` (messages themselves are kept).',
    parse: int(1, 3650),
  }),
  maxStreamsPerUser: setting({
    env: 'PARLEY_MAX_STREAMS_PER_USER',
    default: '20',
    doc: 'Event streams one user may hold open at once; one more is refused with 429.',
    parse: int(1, 100_000),
  }),
  sseBufferEvents: setting({
    env: 'PARLEY_SSE_BUFFER_EVENTS',
    default: '256',
    doc: 'Events buffered for a subscriber that reads slower than events arrive; past this it is disconnected (it resumes with `Last-Event-ID`).',
    parse: int(1, 1_000_000),
  }),
  aiHandle: setting({
    env: 'PARLEY_AI_HANDLE',
    default: 'ai',
    doc: 'The handle that addresses the assistant in a group chat (`@ai` by default).',
    parse: (raw, name) => {
      const v = raw.trim().replace(/^@/, '');
      if (!/^[A-Za-z0-9_-]{1,32}$/.test(v)) throw new ConfigError(`${name} must be 1-32 letters, digits, _ or -, got "${raw}"`);
      return v;
    },
  }),
  groupAiHistory: setting({
    env: 'PARLEY_GROUP_AI_HISTORY',
    default: '20',
    doc: 'How many recent group messages the assistant reads as context when it answers.',
    parse: int(1, 500),
  }),
  groupInviteTtlHours: setting({
    env: 'PARLEY_GROUP_INVITE_TTL_HOURS',
    default: '168',
    doc: 'Hours a group invite code stays valid.',
    parse: int(1, 24 * 365),
  }),
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof settings;
export type Config = { [K in keyof Settings]: Settings[K] extends Setting<infer T> ? T : never };

/**
 * Parse the settings from an environment and a map of CLI flag values (flag → raw string).
 * Flags win over the environment, the environment over defaults.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  flags: Record<string, string | undefined> = {},
): Config {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(settings) as [string, Setting<unknown>][]) {
    const raw = (s.flag && flags[s.flag]) ?? env[s.env] ?? s.default;
    out[key] = s.parse(raw, s.flag && flags[s.flag] !== undefined ? s.flag : s.env);
  }
  return out as Config;
}

/** A config for tests and tools: defaults, overridden by the given values. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), ...overrides };
}

export const settingList = settings as Record<string, Setting<unknown>>;

/** Parsers for rows added by other domains. */
export const parsers = { str, optStr, int, bool, oneOf, list };
