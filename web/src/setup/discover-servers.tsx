import { h, type ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, call } from '../shared/api';

/** One connection a found server would make (admin/discoverServers). */
export interface Offer {
  name: string;
  kind: 'chat' | 'embeddings' | 'images' | 'stt' | 'tts';
  api: string;
  baseUrl: string;
  models: string[];
  voices?: string[];
  addCommand: string;
}
interface FoundServer {
  server: string;
  label: string;
  version: string | null;
  host: string;
  port: number;
  connections: Offer[];
}
interface Discovery {
  servers: FoundServer[];
  unrecognised: { host: string; port: number }[];
  ports: number[];
}

const KINDS: Record<Offer['kind'], string> = { chat: 'Chat', embeddings: 'Embeddings (searching documents by meaning)', images: 'Images', stt: 'Speech to text', tts: 'Text to speech' };
const where = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * Adding an offered connection: one click sends its name, kind, api and base URL to
 * `admin/addConnection` (a chat server without a model named gets its first listed one); the
 * command doing the same from a shell stays beside it.
 */
function AddConnection({ offer, onAdded }: { offer: Offer; onAdded?(): void }) {
  const [state, setState] = useState<{ added?: boolean; busy?: boolean; error?: string }>({});
  const add = async () => {
    setState({ busy: true });
    try {
      await call('admin/addConnection', { name: offer.name, kind: offer.kind, api: offer.api, baseUrl: offer.baseUrl });
      setState({ added: true });
      onAdded?.();
    } catch (err) {
      setState({ error: err instanceof ApiError ? err.message : 'The connection could not be added.' });
    }
  };
  return (
    <div class="setup-add">
      {state.added ? (
        <p role="status">Added as {offer.name}: its models are in the chat's model list.</p>
      ) : (
        <button type="button" onClick={add} disabled={state.busy}>
          Add {offer.name}
        </button>
      )}
      {state.error && <p role="alert">{state.error}</p>}
      <p>Or from a shell, on the machine Parley runs on:</p>
      <pre>
        <code>{offer.addCommand}</code>
      </pre>
    </div>
  );
}

/** A heading of the given level: the page around says where these sit (h3 on the setup page, h4 on the Admin page). */
const Heading = ({ level, ...props }: { level: number; id?: string; children: ComponentChildren }) => h(`h${Math.min(level, 6)}`, props);

function ServerCard({ s, level, onAdded }: { s: FoundServer; level: number; onAdded?(): void }) {
  const id = `server-${s.port}`;
  return (
    <li class="setup-server" aria-labelledby={id}>
      <Heading level={level + 1} id={id}>
        {s.label}
        {s.version ? ` ${s.version}` : ''} <span class="hint">at {where(s.host, s.port)}</span>
      </Heading>
      {s.connections.map((c) => (
        <div key={c.kind} class="setup-offer">
          <Heading level={level + 2}>{KINDS[c.kind]}</Heading>
          {c.models.length ? (
            <ul class="setup-models" aria-label={`${KINDS[c.kind]} models`}>
              {c.models.map((m) => (
                <li key={m}>
                  <code>{m}</code>
                </li>
              ))}
            </ul>
          ) : (
            <p class="hint">
              No models yet{s.server === 'ollama' ? <>: pull one first, e.g. <code>ollama pull llama3.2:3b</code></> : ''}.
            </p>
          )}
          {c.voices?.length ? <p class="hint">Voices: {c.voices.join(', ')}</p> : null}
          <AddConnection offer={c} onAdded={onAdded} />
        </div>
      ))}
    </li>
  );
}

/**
 * "Look for servers on this machine": what answers on the server's loopback, with its models.
 * `level` is the heading level of "Found …"; `onAdded` hears of each connection added.
 */
export function DiscoverServers({ level = 3, onAdded }: { level?: number; onAdded?(): void }) {
  const [found, setFound] = useState<Discovery>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const look = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setFound(await call<Discovery>('admin/discoverServers'));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : 'Parley could not be reached. Try again.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="setup-discover">
      <button type="button" onClick={look} disabled={busy}>
        Look for servers on this machine
      </button>
      <p role="status" class="hint">
        {busy ? 'Looking…' : found ? `Looked on ports ${found.ports.join(', ')} of the machine Parley runs on.` : ''}
      </p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {found && (
        <section aria-labelledby="setup-found">
          <Heading level={level} id="setup-found">
            {found.servers.length ? `Found ${found.servers.length === 1 ? 'one server' : `${found.servers.length} servers`}` : 'No AI server found'}
          </Heading>
          {found.servers.length ? (
            <ul class="setup-servers">
              {found.servers.map((s) => (
                <ServerCard key={`${s.host}:${s.port}`} s={s} level={level} onAdded={onAdded} />
              ))}
            </ul>
          ) : (
            <p>
              Nothing answered as an AI server. Start one on this machine (Ollama, llama.cpp's <code>llama-server</code>, LM Studio, vLLM, LocalAI, Speaches or
              Kokoro) and look again; a server on another port is found once <code>PARLEY_DISCOVER_PORTS</code> names it.
            </p>
          )}
          {found.unrecognised.map((u) => (
            <p key={u.port} class="hint">
              Something answered at {where(u.host, u.port)}, but not as an AI server Parley knows.
            </p>
          ))}
        </section>
      )}
    </div>
  );
}
