import './setup.css';
import { useEffect, useState } from 'preact/hooks';
import { call, type User } from '../shared/api';
import { setupCall, type Refusal } from './setup-api';
import { DiscoverServers } from './discover-servers';

/**
 * The first run (`/setup#token=psu_…`, the link `parley serve` prints while the server has no
 * admin): check the link, ask for the first admin's name and e-mail address, make them (signed in
 * by the answer's cookie), then walk them to connecting an AI server. The token rides in the
 * fragment, which the browser never sends anywhere; once used it leaves the address bar.
 */

const REFUSALS: Record<Refusal, { title: string; text: string; signIn?: boolean }> = {
  unknown: { title: 'This setup link is not valid', text: 'Check that the whole link was copied from the terminal where `parley serve` runs, or make a new one with `parley setup-link`.' },
  used: { title: 'This setup link was already used', text: 'A setup link works once, and this one has made the first admin. Sign in instead.', signIn: true },
  expired: { title: 'This setup link has expired', text: 'A setup link works for an hour. Make a new one with `parley setup-link`, or restart `parley serve`.' },
  done: { title: 'Parley already has an admin', text: 'The first admin has been made. Sign in instead; an admin makes sign-in links with `parley login-link`.', signIn: true },
};

/** `code` spans in a refusal's text. */
const withCode = (text: string) => text.split('`').map((part, i) => (i % 2 ? <code key={i}>{part}</code> : part));

type Step = { name: 'checking' } | { name: 'refused'; refusal?: Refusal; message: string } | { name: 'form'; token: string } | { name: 'connect'; user?: User } | { name: 'no-link' };

const tokenInAddress = () => new URLSearchParams(location.hash.slice(1)).get('token') ?? '';

export function Setup() {
  const [step, setStep] = useState<Step>({ name: 'checking' });
  useEffect(() => {
    const token = tokenInAddress();
    if (!token) {
      // Back on /setup after the admin was made (a reload): the next step, for an admin.
      call<{ user: User }>('auth/getSession').then(
        (s) => setStep(s.user.isAdmin ? { name: 'connect', user: s.user } : { name: 'no-link' }),
        () => setStep({ name: 'no-link' }),
      );
      return;
    }
    setupCall<{ expiresAt: string }>('setup/checkToken', { token }).then((r) => setStep(r.ok ? { name: 'form', token } : { name: 'refused', refusal: r.refusal, message: r.message }));
  }, []);

  return (
    <main class="setup">
      <h1>Set up Parley</h1>
      {step.name === 'checking' && <p>Checking the setup link…</p>}
      {step.name === 'no-link' && (
        <section aria-labelledby="setup-title">
          <h2 id="setup-title">Open the setup link</h2>
          <p>{withCode('This page needs the setup link that `parley serve` prints while Parley has no admin. Lost it? `parley setup-link` makes a new one.')}</p>
          <p>
            <a href="/">Sign in</a>
          </p>
        </section>
      )}
      {step.name === 'refused' && <Refused refusal={step.refusal} message={step.message} />}
      {step.name === 'form' && <AdminForm token={step.token} onMade={(user) => setStep({ name: 'connect', user })} onRefused={(refusal, message) => setStep({ name: 'refused', refusal, message })} />}
      {step.name === 'connect' && <Connect user={step.user} />}
    </main>
  );
}

function Refused({ refusal, message }: { refusal?: Refusal; message: string }) {
  const known = refusal ? REFUSALS[refusal] : undefined;
  return (
    <section aria-labelledby="setup-title">
      <h2 id="setup-title">{known?.title ?? 'The setup link cannot be used'}</h2>
      <p role="alert">{withCode(known?.text ?? message)}</p>
      {known?.signIn && (
        <p>
          <a href="/">Sign in</a>
        </p>
      )}
    </section>
  );
}

function AdminForm({ token, onMade, onRefused }: { token: string; onMade(user: User): void; onRefused(refusal: Refusal, message: string): void }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const r = await setupCall<{ user: User }>('setup/createAdmin', { token, name: name.trim(), email: email.trim() });
    setBusy(false);
    if (r.ok) {
      // The link is spent: out of the address bar and the history entry.
      history.replaceState(null, '', '/setup');
      onMade(r.value.user);
    } else if (r.refusal) onRefused(r.refusal, r.message);
    else setError(r.message);
  };
  return (
    <section aria-labelledby="setup-title">
      <h2 id="setup-title">Create the first admin</h2>
      <p>The admin manages this server: its users, its AI servers, its backups. You will be signed in as this admin.</p>
      <form class="setup-form" onSubmit={submit}>
        <label>
          Name
          <input name="name" autocomplete="name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          E-mail address
          <input name="email" type="email" autocomplete="email" required maxLength={320} value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Create admin
        </button>
      </form>
    </section>
  );
}

function Connect({ user }: { user?: User }) {
  return (
    <section aria-labelledby="setup-title">
      <h2 id="setup-title">Connect an AI server</h2>
      {user && (
        <p role="status">
          You are signed in as {user.name || user.email}, the admin of this server.
        </p>
      )}
      <p>Parley answers with the models of an AI server. It can look for one on the machine it runs on: Ollama, llama.cpp, LM Studio, vLLM, LocalAI, Speaches or Kokoro.</p>
      <DiscoverServers />
      <p>
        <a class="button" href="/">
          Go to Parley
        </a>
      </p>
    </section>
  );
}
