import { settingList, type Config } from '../config';

/** What a secret's value is shown as: never its characters, nor its length. */
export const MASK = '********';

export interface SettingReport {
  key: string;
  env: string;
  flag: string | null;
  doc: string;
  secret: boolean;
  /** The value as text; a set secret is `MASK`, an unset one is empty. */
  value: string;
  /**
   * `default` when the value is the default's, `set` when the environment, the environment file
   * or a flag gave another. The server keeps the parsed settings only, not where each came from.
   */
  source: 'default' | 'set';
}

const text = (v: unknown): string => (v === undefined || v === null ? '' : Array.isArray(v) ? v.join(', ') : String(v));

/**
 * A URL's user name and password are a secret too, whichever setting holds them
 * (`PARLEY_SEARXNG_URL=http://user:pass@searx`, a database URL): masked, the rest shown.
 */
function withoutUserInfo(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/@]*@/i.test(value) || !URL.canParse(value)) return value;
  const url = new URL(value);
  if (url.username) url.username = MASK;
  if (url.password) url.password = MASK;
  return url.toString();
}

/** Every setting of the table (src/config.ts) with its value, secrets masked. */
export function settingsReport(config: Config): SettingReport[] {
  const values = config as unknown as Record<string, unknown>;
  return Object.entries(settingList).map(([key, s]) => {
    const value = values[key];
    let fallback: unknown;
    try {
      fallback = s.parse(s.default, s.env);
    } catch {
      fallback = undefined;
    }
    const shown = text(value);
    return {
      key,
      env: s.env,
      flag: s.flag ?? null,
      doc: s.doc,
      secret: s.secret === true,
      value: s.secret && shown !== '' ? MASK : withoutUserInfo(shown),
      source: JSON.stringify(value) === JSON.stringify(fallback) ? 'default' : 'set',
    };
  });
}
