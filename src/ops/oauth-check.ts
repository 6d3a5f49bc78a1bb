import type { Config } from '../config';
import { configuredProviderIds } from '../auth/oauth.providers';
import type { Check } from './checks';

/**
 * Sign-in with an identity provider needs PARLEY_PUBLIC_URL: the flow refuses to build its
 * callback address from the request's Host header (src/auth/oauth.flow.ts). Without providers
 * there is nothing to say.
 */
export function checkOAuthPublicUrl(config: Config): Check[] {
  const providers = configuredProviderIds(config);
  if (!providers.length) return [];
  const name = 'sign-in';
  if (!config.publicUrl)
    return [
      {
        name,
        status: 'fail',
        detail: `${providers.join(', ')} configured without PARLEY_PUBLIC_URL: every sign-in answers the no_public_url page`,
        fix: 'set PARLEY_PUBLIC_URL to the address users reach Parley at (e.g. https://parley.example.org) and register <PARLEY_PUBLIC_URL>/api/auth/oauth/<id>/callback at the provider (docs/auth.md)',
      },
    ];
  return [{ name, status: 'ok', detail: `${providers.join(', ')}; callbacks at ${config.publicUrl}/api/auth/oauth/<id>/callback` }];
}
