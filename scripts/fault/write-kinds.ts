// The writes the crash script makes and how it checks them after a crash. One entry per kind of
// acknowledged write; a kind whose operations this build does not serve is skipped. To cover a
// new write, add an entry: `send` makes one write and returns what the server acknowledged (or
// undefined when it was not acknowledged), or hands each acknowledgement to `acknowledge` as it
// comes (a stream whose frames are acknowledged one by one); `verify` returns a list of
// problems, empty when every acknowledged write survived.
import type { Database } from 'bun:sqlite';
import type { Api } from './harness';
import { researchEvents } from './research-kind';

export interface Actor {
  /** Index of the worker; each worker has its own user, so its writes are sequential. */
  worker: number;
  /** Base URL of the (restarted) server. */
  url: string;
  api: Api;
  /** The worker's API key (for requests `api` does not cover, e.g. event streams). */
  key: string;
  /** Per-worker state a kind keeps between sends (e.g. the group it writes into). */
  state: Record<string, unknown>;
}

export interface WriteKind<Ack = unknown> {
  name: string;
  /** Operations the kind needs; it is skipped when the server does not serve them all. */
  needs: string[];
  /** Long writes (streams): run in their own loop per worker, beside the quick kinds, so they do not starve them. */
  ownLane?: boolean;
  setup?(actor: Actor): Promise<void>;
  /**
   * One write. Returns the acknowledgement, or throws / returns undefined when there was none.
   * `attempt` records what was sent; `acknowledge` records an acknowledgement at once (for writes
   * acknowledged piecemeal, so a kill mid-write keeps what was already acknowledged).
   */
  send(actor: Actor, seq: number, attempt: (sent: unknown) => void, acknowledge: (ack: Ack) => void): Promise<Ack | undefined>;
  /** Check every acknowledged write of one worker against the restarted server and the database file. */
  verify(actor: Actor, acks: Ack[], inFlight: unknown[], db: Database): Promise<string[]>;
}

/** Find `id` in any table's `id` column: a kind that only knows the id of what it wrote can check it landed. */
export function rowWithIdExists(db: Database, id: string): boolean {
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'").all();
  for (const { name } of tables) {
    const cols = db.query<{ name: string }, []>(`PRAGMA table_info("${name}")`).all();
    if (!cols.some((c) => c.name === 'id')) continue;
    if (db.query(`SELECT 1 FROM "${name}" WHERE id = ?`).get(id)) return true;
  }
  return false;
}

const apiKeys: WriteKind<{ keyId: string; key: string }> = {
  name: 'auth/createApiKey',
  needs: ['auth/createApiKey', 'auth/listApiKeys'],
  async send({ api, worker }, seq, attempt) {
    const name = `crash-${worker}-${seq}`;
    attempt(name);
    const res = await api('auth/createApiKey', { name });
    return res.status === 200 ? { keyId: res.body.keyId, key: res.body.key } : undefined;
  },
  async verify({ api, url }, acks) {
    const listed = await api('auth/listApiKeys', {});
    if (listed.status !== 200) return [`listApiKeys answered ${listed.status}`];
    const ids = new Set(listed.body.keys.map((k: { keyId: string }) => k.keyId));
    const problems = acks.filter((a) => !ids.has(a.keyId)).map((a) => `acknowledged API key ${a.keyId} is missing`);
    // The newest acknowledged key must also still authenticate (it is stored by hash).
    const last = acks.at(-1);
    if (last) {
      const res = await fetch(`${url}/api/preferences/get`, { method: 'POST', headers: { 'x-api-key': last.key } });
      if (res.status !== 200) problems.push(`acknowledged API key ${last.keyId} no longer authenticates (${res.status})`);
    }
    return problems;
  },
};

const preferences: WriteKind<{ seq: number; value: Record<string, boolean> }> = {
  name: 'preferences/update',
  needs: ['preferences/update', 'preferences/get'],
  async send({ api }, seq, attempt) {
    const value = { enableMemories: seq % 2 === 0, showMemoryToolOutput: Math.floor(seq / 2) % 2 === 0 };
    attempt(value);
    const res = await api('preferences/update', value);
    return res.status === 200 ? { seq, value } : undefined;
  },
  async verify({ api }, acks, inFlight) {
    const last = acks.at(-1);
    if (!last) return [];
    const now = await api('preferences/get', {});
    // The last acknowledged value, or a later write that was in flight at the kill (it may or may not have landed).
    const allowed = [last.value, ...inFlight].map((v) => JSON.stringify(v));
    return allowed.includes(JSON.stringify(now.body))
      ? []
      : [`preferences are ${JSON.stringify(now.body)}, expected the last acknowledged ${JSON.stringify(last.value)}`];
  },
};

/** Group messages: runs once groupChat/* has landed. Verified by id in the database file. */
const groupMessages: WriteKind<{ id: string }> = {
  name: 'groupChat/sendGroupMessage',
  needs: ['groupChat/createGroupChat', 'groupChat/sendGroupMessage'],
  async setup(actor) {
    const res = await actor.api('groupChat/createGroupChat', { name: `crash ${actor.worker}` });
    if (res.status !== 200) throw new Error(`createGroupChat answered ${res.status}`);
    actor.state.groupChatId = res.body.id;
  },
  async send(actor, seq, attempt) {
    if (!actor.state.groupChatId) await groupMessages.setup!(actor);
    const message = `crash message ${actor.worker}-${seq}`;
    attempt(message);
    const res = await actor.api('groupChat/sendGroupMessage', { groupChatId: actor.state.groupChatId, message });
    return res.status === 200 ? { id: res.body.id } : undefined;
  },
  async verify(_actor, acks, _inFlight, db) {
    return acks.filter((a) => !rowWithIdExists(db, a.id)).map((a) => `acknowledged group message ${a.id} is missing`);
  },
};

export const writeKinds: WriteKind<any>[] = [apiKeys, preferences, groupMessages, researchEvents];
