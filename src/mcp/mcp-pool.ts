import type { Tool } from '@modelcontextprotocol/client';
import type { Connected } from './mcp-connect';

/**
 * Open MCP connections, one per (server, user): a user's session with a server is theirs alone
 * (their OAuth token, the server's state for them), and a stdio server is a process per user.
 * A connection is made once however many calls want it at the same moment, kept while used,
 * closed after `idleMs` unused, when its server's row changes (a new version), when it breaks,
 * and, past `max` open at once, the least recently used idle one first.
 */
export interface PoolEntry {
  readonly serverId: string;
  readonly userId: string;
  readonly version: number;
  conn: Connected;
  /** The server's tools as last listed; cleared when it says its list changed. */
  tools?: Tool[];
  lastUsed: number;
  busy: number;
}

export interface Pool {
  /** Runs `fn` on the (server, user) connection, making it first if needed. */
  use<T>(key: { serverId: string; userId: string; version: number }, connect: () => Promise<Connected>, fn: (entry: PoolEntry) => Promise<T>): Promise<T>;
  /** Drops a connection that broke (its next use connects again). */
  drop(serverId: string, userId: string): void;
  /** Closes every connection to a server (changed, removed), or of one user to it. */
  closeServer(serverId: string, userId?: string): Promise<void>;
  closeAll(): Promise<void>;
  size(): number;
  /** The open connection of (server, user), if any (tests: the process to kill). */
  peek(serverId: string, userId: string): PoolEntry | undefined;
}

export function createPool(opts: { idleMs: number; max: number; now: () => number; onError?: (err: unknown) => void }): Pool {
  const entries = new Map<string, PoolEntry>();
  const connecting = new Map<string, Promise<PoolEntry>>();
  const keyOf = (serverId: string, userId: string) => `${serverId}\u0000${userId}`;

  const close = (key: string, entry: PoolEntry) => {
    if (entries.get(key) === entry) entries.delete(key);
    void entry.conn.client.close().catch((err) => opts.onError?.(err));
  };

  const sweep = () => {
    const now = opts.now();
    for (const [key, e] of entries) if (e.busy === 0 && now - e.lastUsed >= opts.idleMs) close(key, e);
  };
  // One timer for every connection; it does not keep the process alive.
  const timer = setInterval(sweep, Math.max(1000, Math.min(opts.idleMs / 2, 30_000)));
  timer.unref?.();

  const makeRoom = () => {
    if (entries.size < opts.max) return;
    const idle = [...entries].filter(([, e]) => e.busy === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [key, e] of idle.slice(0, entries.size - opts.max + 1)) close(key, e);
  };

  const acquire = async (key: { serverId: string; userId: string; version: number }, connect: () => Promise<Connected>): Promise<PoolEntry> => {
    const k = keyOf(key.serverId, key.userId);
    const current = entries.get(k);
    if (current && current.version === key.version) return current;
    if (current) close(k, current);
    const pending = connecting.get(k);
    if (pending) {
      const entry = await pending;
      if (entry.version === key.version) return entry;
    }
    const made = (async () => {
      const conn = await connect();
      makeRoom();
      const entry: PoolEntry = { serverId: key.serverId, userId: key.userId, version: key.version, conn, lastUsed: opts.now(), busy: 0 };
      entries.set(k, entry);
      // A server that exits or hangs up: its next use connects again.
      const previous = conn.transport.onclose;
      conn.transport.onclose = () => {
        previous?.();
        if (entries.get(k) === entry) entries.delete(k);
      };
      return entry;
    })();
    connecting.set(k, made);
    try {
      return await made;
    } finally {
      if (connecting.get(k) === made) connecting.delete(k);
    }
  };

  return {
    async use(key, connect, fn) {
      const entry = await acquire(key, connect);
      entry.busy++;
      try {
        return await fn(entry);
      } finally {
        entry.busy--;
        entry.lastUsed = opts.now();
      }
    },
    drop(serverId, userId) {
      const k = keyOf(serverId, userId);
      const entry = entries.get(k);
      if (entry) close(k, entry);
    },
    async closeServer(serverId, userId) {
      const closing = [...entries].filter(([, e]) => e.serverId === serverId && (userId === undefined || e.userId === userId));
      for (const [k] of closing) entries.delete(k);
      await Promise.all(closing.map(([, e]) => e.conn.client.close().catch(() => undefined)));
    },
    async closeAll() {
      clearInterval(timer);
      const all = [...entries.values()];
      entries.clear();
      await Promise.all(all.map((e) => e.conn.client.close().catch(() => undefined)));
    },
    size: () => entries.size,
    peek: (serverId, userId) => entries.get(keyOf(serverId, userId)),
  };
}
