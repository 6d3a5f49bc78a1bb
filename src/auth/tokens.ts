import { randomBytes, timingSafeEqual } from 'node:crypto';

/** 256 random bits, base64url: comfortably above the 128 bits a guessable-token attack would need. */
const randomSecret = () => randomBytes(32).toString('base64url');

export const API_KEY_PREFIX = 'pk_';
export const SESSION_PREFIX = 'ps_';

export const newApiKey = () => API_KEY_PREFIX + randomSecret();
export const newSessionToken = () => SESSION_PREFIX + randomSecret();
/** A one-time sign-in link's secret (`parley login-link`). */
export const newLoginLinkToken = () => 'pl_' + randomSecret();
/** A one-time setup link's secret (`parley serve` while the server has no admin; src/setup/). */
export const newSetupToken = () => 'psu_' + randomSecret();

/** The part of an API key shown in listings: enough to tell keys apart, far too little to use. */
export const visiblePrefix = (key: string) => key.slice(0, API_KEY_PREFIX.length + 6);

/**
 * SHA-256 is the right hash here: the secrets are 256-bit random, so a slow password hash would
 * add latency to every request without adding security.
 */
// Bun's one-shot SHA-256: the same digest as node:crypto's createHash, in well under half the time (every request hashes its credential).
export const hashSecret = (secret: string): string => Bun.SHA256.hash(secret, 'hex');

export function sameHash(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
