import { Elysia, t } from 'elysia';
import type { AppDeps } from '../deps';
import { defineOperation } from '../http/operation';
import { pageRoute } from '../http/register';
import { finishSignIn, startSignIn } from './oauth.flow';
import { OAUTH_ERRORS } from './oauth.page';
import { configuredProviderIds, partlyConfiguredProviderIds, providerName } from './oauth.providers';

/** The two browser routes of the sign-in flow. They are GETs (the browser navigates), public, and never answer JSON. */
export function oauthRoutes(deps: AppDeps) {
  const partial = partlyConfiguredProviderIds(deps.config);
  if (partial.length) deps.log.warn('sign-in providers with missing settings are not offered', { providers: partial });
  if (!deps.config.publicUrl && configuredProviderIds(deps.config).length)
    deps.log.warn('sign-in with an identity provider is refused until PARLEY_PUBLIC_URL is set', { providers: configuredProviderIds(deps.config) });
  return new Elysia({ name: 'oauth' })
    .get('/api/auth/oauth/:provider', pageRoute<{ request: Request; params: { provider: string } }>(deps, ({ request, params }) => startSignIn(deps, request, params.provider)))
    .get('/api/auth/oauth/:provider/callback', pageRoute<{ request: Request; params: { provider: string } }>(deps, ({ request, params }) => finishSignIn(deps, request, params.provider)));
}

export const oauthOperations = [
  defineOperation({
    path: 'auth/listProviders',
    public: true,
    summary: 'The identity providers this server offers for signing in (no credential needed)',
    description:
      'Send the browser to `signInUrl` (GET) to sign in; a native app adds `?redirect=<its custom scheme URL>`. `signup` tells whether a first sign-in may create an account.',
    input: t.Object({}),
    output: t.Object({
      providers: t.Array(t.Object({ id: t.String(), name: t.String(), signInUrl: t.String() })),
      signup: t.Union([t.Literal('open'), t.Literal('closed')]),
    }),
    handler: ({ deps }) => ({
      providers: configuredProviderIds(deps.config).map((id) => ({ id, name: providerName(id), signInUrl: `/api/auth/oauth/${id}` })),
      signup: deps.config.signup,
    }),
  }),
];

const errorCodes = Object.keys(OAUTH_ERRORS).join('`, `');

/** OpenAPI entries for the GET routes, which are not operation rows. */
export const oauthOpenApiPaths = {
  '/api/auth/oauth/{provider}': {
    get: {
      operationId: 'auth.oauthStart',
      tags: ['auth'],
      summary: 'Start signing in with an identity provider (browser navigation)',
      description:
        'Redirects (302) to the provider with state and PKCE; the state and code verifier travel in short-lived HttpOnly cookies. A native app passes `redirect` (a URL with a scheme from `PARLEY_NATIVE_REDIRECT_SCHEMES`) to receive its bearer token there.',
      security: [],
      parameters: [
        { name: 'provider', in: 'path', required: true, schema: { type: 'string' }, description: 'an id from `auth/listProviders`' },
        { name: 'redirect', in: 'query', required: false, schema: { type: 'string' } },
      ],
      responses: {
        302: { description: 'To the provider' },
        400: { description: 'HTML page, error code `invalid_redirect`' },
        404: { description: 'HTML page, error code `unknown_provider`' },
        503: { description: 'HTML page, error code `no_public_url`: `PARLEY_PUBLIC_URL` is not set' },
      },
    },
  },
  '/api/auth/oauth/{provider}/callback': {
    get: {
      operationId: 'auth.oauthCallback',
      tags: ['auth'],
      summary: 'Where the provider sends the browser back (not called by apps)',
      description: `On success: sets the session cookie and redirects to \`PARLEY_APP_URL\` (or shows a page), or redirects a native app to its \`redirect\` with \`token\` and \`expiresAt\`. On failure: the same target with \`error=<code>\`, or a page; codes: \`${errorCodes}\`.`,
      security: [],
      parameters: [
        { name: 'provider', in: 'path', required: true, schema: { type: 'string' } },
        { name: 'code', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'state', in: 'query', required: false, schema: { type: 'string' } },
        { name: 'error', in: 'query', required: false, schema: { type: 'string' } },
      ],
      responses: { 200: { description: 'HTML result page' }, 302: { description: 'To the app' }, '4XX': { description: 'HTML error page' }, '5XX': { description: 'HTML error page' } },
    },
  },
};
