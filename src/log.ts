import { maskSecretsIn } from './mask-secrets';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/**
 * One JSON object per line on stderr. Callers pass fields, never credentials: request lines carry
 * the path only (no query string, no headers), so tokens and keys cannot end up in the log; a URL
 * quoted anyway (an upstream's error text) has its user info and credential parameters masked.
 */
export function createLogger(level: LogLevel, write?: LineWriter): Logger {
  const min = rank[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (rank[lvl] < min) return;
    // The shared stderr batch (and its exit hook) is made by the first line written, not by
    // every logger made: `silentLogger` is created on import and never writes.
    write ??= stderrWriter();
    // Spliced rather than one JSON.stringify of a merged object: a request line is logged per
    // request, and the merged copy of its fields cost more than the rest of the line.
    const head = `{"time":"${isoNow()}","level":"${lvl}","msg":${JSON.stringify(msg)}`;
    const rest = fields ? JSON.stringify(fields) : '{}';
    // An upstream's error or a setting quoted in a field may hold a URL with a password or a token.
    write(maskSecretsIn(rest.length > 2 ? `${head},${rest.slice(1)}` : `${head}}`) + '\n', rank[lvl] >= rank.warn);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

let isoMs = -1;
let isoText = '';
/** The time as ISO 8601, formatted once per millisecond however many lines share it. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** `urgent`: write now, with everything before it (warnings and errors must survive a crash). */
export type LineWriter = (line: string, urgent?: boolean) => void;

const FLUSH_EVERY_MS = 50;

/**
 * stderr, written in batches: at most every `FLUSH_EVERY_MS` (or 512 lines) instead of once per
 * line. A request line per request, written on its own, cost a system call each: a tenth of the
 * throughput of a simple operation (bench/RESULTS.md, change 8). Lines keep their order; what is
 * pending is written at exit, and a warning or an error is written at once with everything
 * before it. A SIGKILL loses at most the last 50 ms of info lines.
 */
export function batchedStderr(out: (chunk: string) => void = (c) => process.stderr.write(c)): LineWriter {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending.length) return;
    const chunk = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    out(chunk);
  };
  process.on('exit', flush);
  return (line, urgent) => {
    pending.push(line);
    if (urgent || pending.length >= 512) flush();
    else if (!scheduled) {
      scheduled = true;
      setTimeout(flush, FLUSH_EVERY_MS).unref();
    }
  };
}

let sharedStderr: LineWriter | undefined;
/** One batch for the whole process, however many loggers write to stderr. */
const stderrWriter = (): LineWriter => (sharedStderr ??= batchedStderr());

export const silentLogger: Logger = createLogger('silent');
