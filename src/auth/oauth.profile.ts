import { decodeIdToken, type OAuth2Tokens } from 'arctic';
import { keyedFetch } from '../net/keyed-fetch';

/** What Parley needs from an identity provider: an e-mail it vouches for, and a name and picture to start with. */
export interface OAuthProfile {
  email: string | undefined;
  emailVerified: boolean;
  name: string;
  image: string;
}

/** A provider answered something Parley cannot use; the flow ends with `provider_error`. */
export class ProviderResponseError extends Error {}

const PROFILE_TIMEOUT_MS = 10_000;

type Json = Record<string, unknown>;

async function fetchJson(url: string, accessToken: string): Promise<unknown> {
  let res: Response;
  try {
    res = await keyedFetch()(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'parley' },
      signal: AbortSignal.timeout(PROFILE_TIMEOUT_MS),
    });
  } catch (err) {
    throw new ProviderResponseError(`GET ${url} failed: ${(err as Error).message}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new ProviderResponseError(`GET ${url} answered ${res.status}`);
  }
  try {
    return await res.json();
  } catch {
    throw new ProviderResponseError(`GET ${url} answered no JSON`);
  }
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');
// Some providers send the flag as the string "true".
const isTrue = (v: unknown) => v === true || v === 'true';

/**
 * Profile from OIDC claims. The e-mail and its verified flag are read from the same source:
 * userinfo when it says whether the e-mail is verified, otherwise the ID token (Gitea's userinfo
 * has no `email_verified` in older versions; its ID token does).
 */
export function oidcProfile(userinfo: Json, idClaims?: Json): OAuthProfile {
  if (idClaims && userinfo.sub !== undefined && idClaims.sub !== undefined && userinfo.sub !== idClaims.sub)
    throw new ProviderResponseError('userinfo and ID token name different subjects');
  const source = userinfo.email_verified !== undefined || !idClaims ? userinfo : idClaims;
  const email = str(source.email) || undefined;
  return {
    email,
    emailVerified: Boolean(email) && isTrue(source.email_verified),
    name: str(userinfo.name) || str(idClaims?.name) || str(userinfo.preferred_username),
    image: str(userinfo.picture) || str(idClaims?.picture),
  };
}

/**
 * The ID token came straight from the provider's token endpoint over the back channel, so TLS
 * authenticates it (OpenID Connect Core 3.1.3.7) and its signature need not be checked here.
 */
export async function fetchOidcProfile(userinfoUrl: string, tokens: OAuth2Tokens): Promise<OAuthProfile> {
  let idClaims: Json | undefined;
  if ('id_token' in tokens.data && typeof tokens.data.id_token === 'string') {
    try {
      idClaims = decodeIdToken(tokens.data.id_token) as Json;
    } catch {
      throw new ProviderResponseError('the ID token is malformed');
    }
  }
  const userinfo = await fetchJson(userinfoUrl, tokens.accessToken());
  if (!userinfo || typeof userinfo !== 'object') throw new ProviderResponseError('userinfo is not an object');
  return oidcProfile(userinfo as Json, idClaims);
}

export interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

/** GitHub's `/user` may hide the e-mail; `/user/emails` lists them with a verified flag. Primary first. */
export function githubProfile(user: Json, emails: GithubEmail[]): OAuthProfile {
  const verified = emails.filter((e) => e && e.verified === true && typeof e.email === 'string');
  const chosen = verified.find((e) => e.primary) ?? verified[0];
  const anyEmail = chosen?.email ?? (str(user.email) || undefined);
  return {
    email: anyEmail,
    emailVerified: Boolean(chosen),
    name: str(user.name) || str(user.login),
    image: str(user.avatar_url),
  };
}

export async function fetchGithubProfile(apiBase: string, accessToken: string): Promise<OAuthProfile> {
  const [user, emails] = await Promise.all([fetchJson(`${apiBase}/user`, accessToken), fetchJson(`${apiBase}/user/emails`, accessToken)]);
  if (!user || typeof user !== 'object' || !Array.isArray(emails)) throw new ProviderResponseError('unexpected GitHub user answer');
  return githubProfile(user as Json, emails as GithubEmail[]);
}
