import './consent.css';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, type User } from '../shared/api';
import { SignIn } from '../auth/sign-in';
import { rememberReturn } from './return-after-sign-in';

/**
 * The consent page of Parley's OAuth server (`/oauth/authorize`, docs/mcp-server.md "OAuth"): an
 * MCP client (an editor, a desktop agent) sent the user here to be allowed to use Parley for them.
 * It shows who asks and where the browser goes back to; Allow and Deny each end on the client's
 * redirect address, which the server answers (mcpAccess/approveAuthorization, mcpAccess/denyAuthorization).
 * Signed out, it asks to sign in first and comes back here afterwards.
 */

interface Checked {
  clientName: string;
  clientUri: string | null;
  redirectHost: string;
  scope: string;
  refusedWith: string | null;
}

type State = { name: 'loading' } | { name: 'sign-in' } | { name: 'ask'; user: User; checked: Checked } | { name: 'leaving' } | { name: 'error'; message: string };

/** The authorization request as the client put it in the address. */
function requestInAddress() {
  const q = new URLSearchParams(location.search);
  const get = (k: string) => q.get(k) ?? undefined;
  return {
    clientId: q.get('client_id') ?? '',
    redirectUri: q.get('redirect_uri') ?? '',
    responseType: get('response_type'),
    codeChallenge: get('code_challenge'),
    codeChallengeMethod: get('code_challenge_method'),
    scope: get('scope'),
    state: get('state'),
    resource: get('resource'),
  };
}

const message = (err: unknown) => (err instanceof ApiError ? err.message : 'Parley could not be reached. Reload the page to try again.');

export function Consent() {
  const [state, setState] = useState<State>({ name: 'loading' });
  const request = requestInAddress();
  useEffect(() => {
    call<{ user: User }>('auth/getSession').then(
      async (s) => {
        try {
          const checked = await call<Checked>('mcpAccess/checkAuthorization', request);
          if (checked.refusedWith) return location.replace(checked.refusedWith);
          setState({ name: 'ask', user: s.user, checked });
        } catch (err) {
          setState({ name: 'error', message: message(err) });
        }
      },
      (err) => {
        if (err instanceof ApiError && err.status === 401) {
          rememberReturn();
          setState({ name: 'sign-in' });
        } else setState({ name: 'error', message: message(err) });
      },
    );
  }, []);

  const answer = async (operation: 'mcpAccess/approveAuthorization' | 'mcpAccess/denyAuthorization') => {
    setState({ name: 'leaving' });
    try {
      location.replace((await call<{ redirectTo: string }>(operation, request)).redirectTo);
    } catch (err) {
      setState({ name: 'error', message: message(err) });
    }
  };

  if (state.name === 'sign-in') return <SignIn />;
  return (
    <main class="page-message consent">
      <h1>Connect an application to Parley</h1>
      {state.name === 'loading' && <p>Checking the request…</p>}
      {state.name === 'leaving' && <p>Returning to the application…</p>}
      {state.name === 'error' && <p role="alert">{state.message}</p>}
      {state.name === 'ask' && (
        <section aria-labelledby="consent-question">
          <p id="consent-question">
            <strong>{state.checked.clientName}</strong>
            {state.checked.clientUri && <> ({state.checked.clientUri})</>} asks to use Parley as <strong>{state.user.email}</strong>.
          </p>
          <p>
            It will be able to start and read deep research, search your files and conversations, and, while memories are on, read and change your memories. It
            cannot see your API keys or change your settings. You can end this at any time in Settings.
          </p>
          <p>
            You will be sent back to <code>{state.checked.redirectHost}</code>.
          </p>
          <div class="consent-actions">
            <button type="button" class="primary" onClick={() => void answer('mcpAccess/approveAuthorization')}>
              Allow
            </button>
            <button type="button" onClick={() => void answer('mcpAccess/denyAuthorization')}>
              Deny
            </button>
          </div>
        </section>
      )}
    </main>
  );
}
