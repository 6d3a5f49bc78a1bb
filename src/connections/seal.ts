import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config';

/**
 * Connections' credentials sealed at rest (docs/connections.md): AES-256-GCM through Web Crypto,
 * with a key from `PARLEY_SECRET_KEY` or a key file in the data directory. A sealed value names
 * its key (`v1.<key id>.<iv>.<ciphertext>`), so a rotation can leave the old key readable until
 * every value is sealed again with the new one.
 */

export const KEY_FILE = 'secret.key';
/** Keys a rotation replaced, one a line: read, never used to seal. */
export const PREVIOUS_KEY_FILE = 'secret.key.previous';

export class SealError extends Error {}

interface Key {
  id: string;
  key: CryptoKey;
}

export interface Sealer {
  seal(plain: string): Promise<string>;
  open(sealed: string): Promise<string>;
  /** The id of the key new values are sealed with. */
  currentKeyId(): Promise<string>;
  /** Whether a sealed value was sealed with the current key (a rotation leaves the others to re-seal). */
  isCurrent(sealed: string): Promise<boolean>;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

/** 32 random bytes, as the key file and `PARLEY_SECRET_KEY` hold them. */
export const newKeyText = () => b64(crypto.getRandomValues(new Uint8Array(32)));

async function importKey(text: string, where: string): Promise<Key> {
  const raw = unb64(text.trim());
  if (raw.length !== 32 || b64(raw) !== text.trim()) throw new SealError(`${where} is not 32 bytes in base64 (make one with \`openssl rand -base64 32\`).`);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', raw));
  const id = Buffer.from(digest.slice(0, 4)).toString('hex');
  return { id, key: await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']) };
}

const keyFile = (config: Pick<Config, 'dataDir'>) => join(config.dataDir, KEY_FILE);

/** The key file's text, made (0600, written whole then renamed) when missing. */
function keyFileText(config: Pick<Config, 'dataDir'>): string {
  const file = keyFile(config);
  if (!existsSync(file)) {
    mkdirSync(config.dataDir, { recursive: true });
    writeKeyFile(file, newKeyText());
  }
  return readFileSync(file, 'utf8').trim();
}

function writeKeyFile(file: string, text: string): void {
  const partial = `${file}.partial`;
  writeFileSync(partial, `${text}\n`, { mode: 0o600 });
  chmodSync(partial, 0o600);
  renameSync(partial, file);
}

const previousFromFile = (config: Pick<Config, 'dataDir'>): string[] => {
  const file = join(config.dataDir, PREVIOUS_KEY_FILE);
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean) : [];
};

type SealConfig = Pick<Config, 'dataDir' | 'secretKey' | 'secretKeyPrevious'>;

/**
 * The keys, read at first need and again when a value names a key not known yet (another process
 * rotated the key file meanwhile). Nothing touches the disk before a credential is sealed or
 * opened, so a server without connection credentials makes no key file.
 */
export function createSealer(config: SealConfig): Sealer {
  let ring: Promise<{ current: Key; all: Map<string, Key> }> | undefined;
  const load = async () => {
    const current = config.secretKey ? await importKey(config.secretKey, 'PARLEY_SECRET_KEY') : await importKey(keyFileText(config), keyFile(config));
    const all = new Map([[current.id, current]]);
    const previous = config.secretKey ? config.secretKeyPrevious : previousFromFile(config);
    for (const text of previous) {
      const key = await importKey(text, config.secretKey ? 'PARLEY_SECRET_KEY_PREVIOUS' : join(config.dataDir, PREVIOUS_KEY_FILE));
      all.set(key.id, key);
    }
    return { current, all };
  };
  const keys = () => (ring ??= load().catch((err) => ((ring = undefined), Promise.reject(err))));

  return {
    async seal(plain) {
      const { current } = await keys();
      const iv = crypto.getRandomValues(new Uint8Array(12));
      const data = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, current.key, new TextEncoder().encode(plain)));
      return `v1.${current.id}.${b64(iv)}.${b64(data)}`;
    },
    async open(sealed) {
      const [version, id, iv, data] = sealed.split('.');
      if (version !== 'v1' || !id || !iv || !data) throw new SealError('A sealed credential is damaged.');
      let key = (await keys()).all.get(id);
      if (!key) {
        ring = undefined;
        key = (await keys()).all.get(id);
      }
      if (!key)
        throw new SealError(
          `A credential was sealed with a key this server does not have (key ${id}): give every instance the same PARLEY_SECRET_KEY, or restore the data directory's ${KEY_FILE}.`,
        );
      try {
        return new TextDecoder().decode(await crypto.subtle.decrypt({ name: 'AES-GCM', iv: unb64(iv) }, key.key, unb64(data)));
      } catch {
        throw new SealError(`A sealed credential does not open with key ${id}: it was changed or damaged.`);
      }
    },
    currentKeyId: async () => (await keys()).current.id,
    isCurrent: async (sealed) => sealed.split('.')[1] === (await keys()).current.id,
  };
}

/**
 * A new key file, the old key kept readable in `secret.key.previous` (a rotation, before the
 * credentials are sealed again). Refused with `PARLEY_SECRET_KEY`: that key is changed where it is set.
 */
export function rotateKeyFile(config: SealConfig): void {
  if (config.secretKey) throw new SealError('PARLEY_SECRET_KEY is set: set the new key there and the old one in PARLEY_SECRET_KEY_PREVIOUS, restart, then run rotate-key again to seal every credential with the new key.');
  const old = keyFileText(config);
  const previous = join(config.dataDir, PREVIOUS_KEY_FILE);
  writeKeyFile(previous, [...previousFromFile(config), old].join('\n'));
  writeKeyFile(keyFile(config), newKeyText());
}
