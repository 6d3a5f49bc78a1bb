import { useEffect, useState } from 'preact/hooks';
import { call, type Provider } from '../shared/api';
import { SetupNotice } from '../setup/setup-notice';

/** Messages for the `?error=<code>` a sign-in that failed lands with (docs/auth.md, "Error codes"). */
const SIGN_IN_ERRORS: Record<string, string> = {
  access_denied: 'Sign-in was cancelled at the identity provider.',
  email_not_verified: 'The identity provider did not confirm a verified e-mail address for this account.',
  signup_closed: 'There is no account for this e-mail address, and sign-up is closed.',
  signup_not_allowed: 'This e-mail address may not sign up on this server.',
  invalid_state: 'This sign-in expired or was not started from this browser. Please start again.',
};

export function SignIn() {
  const [providers, setProviders] = useState<Provider[]>();
  const error = new URLSearchParams(location.search).get('error');
  useEffect(() => {
    call<{ providers: Provider[] }>('auth/listProviders').then((r) => setProviders(r.providers), () => setProviders([]));
  }, []);
  return (
    <main class="sign-in">
      <h1>Sign in to Parley</h1>
      <SetupNotice />
      {error && (
        <p role="alert" class="error">
          {SIGN_IN_ERRORS[error] ?? 'Signing in did not work. Please try again.'} (error code: <code>{error}</code>)
        </p>
      )}
      {providers === undefined ? (
        <p>Loading…</p>
      ) : providers.length ? (
        <ul class="providers">
          {providers.map((p) => (
            <li key={p.id}>
              <a class="button" href={p.signInUrl}>
                Sign in with {p.name}
              </a>
            </li>
          ))}
        </ul>
      ) : null}
      <p>
        {providers?.length ? 'Or ask' : 'Ask'} the administrator of this server for a sign-in link. They make one with{' '}
        <code>parley login-link --email you@example.org</code>; it works once, for a few minutes.
      </p>
    </main>
  );
}
