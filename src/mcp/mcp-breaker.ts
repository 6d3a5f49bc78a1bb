import { McpError } from './mcp-errors';

/**
 * A circuit breaker per MCP server: after `failures` failures in a row that are the server's
 * (refused connections, timeouts, a closed pipe), its calls fail at once for `openMs`, so a dead
 * server costs each turn nothing instead of a timeout per tool call. Then one call goes through
 * (half-open): its success closes the breaker, its failure opens it again.
 */
export interface Breaker {
  /** Throws when the server is left alone now; otherwise lets the call through (one at a time when half-open). */
  check(serverId: string, name: string): void;
  success(serverId: string): void;
  failure(serverId: string, err: McpError): void;
  /** What the admin pages show: open until when, or null. */
  state(serverId: string): { failures: number; openUntil: number | null };
}

interface State {
  failures: number;
  openUntil: number;
  trial: boolean;
}

export function createBreaker(opts: { failures: number; openMs: number; now: () => number }): Breaker {
  const states = new Map<string, State>();
  return {
    check(serverId, name) {
      const s = states.get(serverId);
      if (!s || s.failures < opts.failures) return;
      const now = opts.now();
      if (now < s.openUntil || s.trial) {
        const seconds = Math.max(1, Math.ceil((s.openUntil - now) / 1000));
        throw new McpError(`The MCP server ${name} failed ${s.failures} times in a row, so Parley leaves it alone for ${seconds} s more.`, 'breaker');
      }
      s.trial = true;
    },
    success(serverId) {
      states.delete(serverId);
    },
    failure(serverId, err) {
      if (!err.counts) return;
      const s = states.get(serverId) ?? { failures: 0, openUntil: 0, trial: false };
      s.failures++;
      s.trial = false;
      if (s.failures >= opts.failures) s.openUntil = opts.now() + opts.openMs;
      states.set(serverId, s);
    },
    state(serverId) {
      const s = states.get(serverId);
      return { failures: s?.failures ?? 0, openUntil: s && s.failures >= opts.failures && s.openUntil > opts.now() ? s.openUntil : null };
    },
  };
}
