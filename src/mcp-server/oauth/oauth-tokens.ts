import { randomBytes } from 'node:crypto';
import { hashSecret } from '../../auth/tokens';
import type { IssuedHashes } from './oauth.store';

/** An access token Parley issued to an MCP client (docs/mcp-server.md, "OAuth"). */
export const OAUTH_ACCESS_PREFIX = 'pma_';
const REFRESH_PREFIX = 'pmr_';
const CODE_PREFIX = 'pmc_';
const CLIENT_SECRET_PREFIX = 'pms_';

/** Short-lived: a stolen access token is good for an hour at most; the client refreshes it. */
export const ACCESS_TTL_MS = 60 * 60 * 1000;
/** A refresh token lasts 30 days from its last use: a client used monthly stays connected. */
export const REFRESH_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** A code lives long enough for the client to trade it, no longer. */
export const CODE_TTL_MS = 60 * 1000;

const secret = (prefix: string) => prefix + randomBytes(32).toString('base64url');
export const newCode = () => secret(CODE_PREFIX);
export const newClientSecret = () => secret(CLIENT_SECRET_PREFIX);

/** A fresh access and refresh token: the secrets to hand out, and their hashes to store. */
export function issueTokens(now: number): { access: string; refresh: string; hashes: IssuedHashes } {
  const access = secret(OAUTH_ACCESS_PREFIX);
  const refresh = secret(REFRESH_PREFIX);
  return {
    access,
    refresh,
    hashes: { access: { hash: hashSecret(access), expiresAt: now + ACCESS_TTL_MS }, refresh: { hash: hashSecret(refresh), expiresAt: now + REFRESH_TTL_MS } },
  };
}
