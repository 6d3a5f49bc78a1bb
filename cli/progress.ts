/** Where progress goes: stderr, so stdout stays the command's answer (and `--json` stays parseable). */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface Progress {
  update(fraction: number, detail?: string): void;
  /** Clear the progress line. */
  done(): void;
}

/**
 * A one-line progress display for long CLI work. It draws only on a terminal: piped into a file,
 * a log or a cron mail it writes nothing, so scripts see the same output as before.
 */
export function createProgress(label: string, stream: ProgressStream = process.stderr): Progress {
  if (!stream.isTTY) return { update() {}, done() {} };
  let last = '';
  let drawn = false;
  return {
    update(fraction, detail) {
      const line = `${label} ${Math.floor(Math.max(0, Math.min(1, fraction)) * 100)}%${detail ? ` ${detail}` : ''}`;
      if (line === last) return;
      last = line;
      drawn = true;
      stream.write(`\r\x1b[K${line}`);
    },
    done() {
      if (drawn) stream.write('\r\x1b[K');
      drawn = false;
    },
  };
}
