import { settingList, type Config } from '../config';
import { MASK, maskSecretsIn } from '../mask-secrets';
import { formatRate, type Rate } from '../http/rate-limit';

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

const isRate = (v: unknown): v is Rate => typeof v === 'object' && v !== null && 'capacity' in v && 'perMs' in v;

/** A parsed value back as text: a list joined, a rate as written (`120/min`), another object as JSON, never `[object Object]`. */
const text = (v: unknown): string =>
  v === undefined || v === null ? '' : Array.isArray(v) ? v.join(', ') : isRate(v) ? formatRate(v) : typeof v === 'object' ? JSON.stringify(v) : String(v);

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
      // A URL's user info and credential parameters are secrets too, whichever setting holds them.
      value: s.secret && shown !== '' ? MASK : maskSecretsIn(shown),
      source: JSON.stringify(value) === JSON.stringify(fallback) ? 'default' : 'set',
    };
  });
}
