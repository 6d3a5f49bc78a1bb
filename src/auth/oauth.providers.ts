import { Authentik, CodeChallengeMethod, GitHub, Gitea, Google, KeyCloak, OAuth2Client, type OAuth2Tokens } from 'arctic';
import type { Config } from '../config';
import { fetchGithubProfile, fetchOidcProfile, type OAuthProfile } from './oauth.profile';

/**
 * The identity providers Parley can sign in with, all through arctic. A provider is offered only
 * when every config row it needs is set (`configuredProviders`).
 */
export const PROVIDER_IDS = ['github', 'google', 'gitea', 'forgejo', 'gitlab', 'keycloak', 'authentik'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export interface OAuthProvider {
  id: ProviderId;
  name: string;
  authorizationUrl(state: string, codeVerifier: string): URL;
  exchangeCode(code: string, codeVerifier: string): Promise<OAuth2Tokens>;
  fetchProfile(tokens: OAuth2Tokens): Promise<OAuthProfile>;
}

interface Credentials {
  clientId: string;
  clientSecret: string;
  baseUrl: string;
}

/** What arctic's PKCE-capable provider classes have in common. */
interface PkceClient {
  createAuthorizationURL(state: string, codeVerifier: string, scopes: string[]): URL;
  validateAuthorizationCode(code: string, codeVerifier: string): Promise<OAuth2Tokens>;
}

const OIDC_SCOPES = ['openid', 'email', 'profile'];

function oidc(id: ProviderId, name: string, client: PkceClient, userinfoUrl: string): OAuthProvider {
  return {
    id,
    name,
    authorizationUrl: (state, verifier) => client.createAuthorizationURL(state, verifier, OIDC_SCOPES),
    exchangeCode: (code, verifier) => client.validateAuthorizationCode(code, verifier),
    fetchProfile: (tokens) => fetchOidcProfile(userinfoUrl, tokens),
  };
}

/** arctic's GitLab class sends no PKCE; its generic client with GitLab's endpoints does. */
function gitlabClient(c: Credentials, redirectUri: string): PkceClient {
  const client = new OAuth2Client(c.clientId, c.clientSecret, redirectUri);
  return {
    createAuthorizationURL: (state, verifier, scopes) =>
      client.createAuthorizationURLWithPKCE(`${c.baseUrl}/oauth/authorize`, state, CodeChallengeMethod.S256, verifier, scopes),
    validateAuthorizationCode: (code, verifier) => client.validateAuthorizationCode(`${c.baseUrl}/oauth/token`, code, verifier),
  };
}

const catalogue: Record<ProviderId, { name: string; keys: [keyof Config, keyof Config, (keyof Config)?]; build(c: Credentials, redirectUri: string): OAuthProvider }> = {
  github: {
    name: 'GitHub',
    keys: ['oauthGithubClientId', 'oauthGithubClientSecret'],
    build: (c, redirectUri) => {
      // GitHub's OAuth apps take no PKCE in arctic's GitHub class; the state cookie still binds the flow.
      const client = new GitHub(c.clientId, c.clientSecret, redirectUri);
      return {
        id: 'github',
        name: 'GitHub',
        authorizationUrl: (state) => client.createAuthorizationURL(state, ['read:user', 'user:email']),
        exchangeCode: (code) => client.validateAuthorizationCode(code),
        fetchProfile: (tokens) => fetchGithubProfile('https://api.github.com', tokens.accessToken()),
      };
    },
  },
  google: {
    name: 'Google',
    keys: ['oauthGoogleClientId', 'oauthGoogleClientSecret'],
    build: (c, r) => oidc('google', 'Google', new Google(c.clientId, c.clientSecret, r), 'https://openidconnect.googleapis.com/v1/userinfo'),
  },
  gitea: {
    name: 'Gitea',
    keys: ['oauthGiteaClientId', 'oauthGiteaClientSecret', 'oauthGiteaBaseUrl'],
    build: (c, r) => oidc('gitea', 'Gitea', new Gitea(c.baseUrl, c.clientId, c.clientSecret, r), `${c.baseUrl}/login/oauth/userinfo`),
  },
  forgejo: {
    name: 'Forgejo',
    keys: ['oauthForgejoClientId', 'oauthForgejoClientSecret', 'oauthForgejoBaseUrl'],
    // Forgejo is a fork of Gitea and keeps its OAuth endpoints.
    build: (c, r) => oidc('forgejo', 'Forgejo', new Gitea(c.baseUrl, c.clientId, c.clientSecret, r), `${c.baseUrl}/login/oauth/userinfo`),
  },
  gitlab: {
    name: 'GitLab',
    keys: ['oauthGitlabClientId', 'oauthGitlabClientSecret', 'oauthGitlabBaseUrl'],
    build: (c, r) => oidc('gitlab', 'GitLab', gitlabClient(c, r), `${c.baseUrl}/oauth/userinfo`),
  },
  keycloak: {
    name: 'Keycloak',
    keys: ['oauthKeycloakClientId', 'oauthKeycloakClientSecret', 'oauthKeycloakBaseUrl'],
    build: (c, r) => oidc('keycloak', 'Keycloak', new KeyCloak(c.baseUrl, c.clientId, c.clientSecret, r), `${c.baseUrl}/protocol/openid-connect/userinfo`),
  },
  authentik: {
    name: 'Authentik',
    keys: ['oauthAuthentikClientId', 'oauthAuthentikClientSecret', 'oauthAuthentikBaseUrl'],
    build: (c, r) => oidc('authentik', 'Authentik', new Authentik(c.baseUrl, c.clientId, c.clientSecret, r), `${c.baseUrl}/application/o/userinfo/`),
  },
};

function credentialsOf(config: Config, id: ProviderId): { creds?: Credentials; partial: boolean } {
  const [idKey, secretKey, baseKey] = catalogue[id].keys;
  const clientId = config[idKey] as string | undefined;
  const clientSecret = config[secretKey] as string | undefined;
  const baseUrl = baseKey ? (config[baseKey] as string | undefined) : '';
  if (clientId && clientSecret && baseUrl !== undefined) return { creds: { clientId, clientSecret, baseUrl }, partial: false };
  // A base URL with a default (GitLab's) does not count as started configuration.
  return { partial: Boolean(clientId || clientSecret) };
}

/** The providers whose rows are all set, in catalogue order. */
export const configuredProviderIds = (config: Config): ProviderId[] => PROVIDER_IDS.filter((id) => credentialsOf(config, id).creds);

/** Providers with some rows set but not all: worth a warning at start-up, never offered. */
export const partlyConfiguredProviderIds = (config: Config): ProviderId[] => PROVIDER_IDS.filter((id) => credentialsOf(config, id).partial);

export const providerName = (id: ProviderId) => catalogue[id].name;

export const isProviderId = (s: string): s is ProviderId => (PROVIDER_IDS as readonly string[]).includes(s);

/** Build the arctic client for a configured provider; undefined when it is not configured. */
export function buildProvider(config: Config, id: ProviderId, redirectUri: string): OAuthProvider | undefined {
  const { creds } = credentialsOf(config, id);
  return creds ? catalogue[id].build(creds, redirectUri) : undefined;
}
