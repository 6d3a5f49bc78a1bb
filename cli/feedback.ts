import { InvalidArgumentError, Option, type Command } from 'commander';
import { open, rename } from 'node:fs/promises';
import { once } from 'node:events';
import { parseIsoDate } from '../src/admin/user-admin';
import { partialName, removePartial } from '../src/db/partial-file';
import { csvHeader, csvLine, jsonlLine, readFeedbackExport } from '../src/feedback/feedback-export';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';

type ExportOptions = CommonOptions & { format: 'jsonl' | 'csv'; since?: number; out?: string };

/** A bad flag is commander's own error: one line, exit code 1, before anything is opened. */
function parseSince(text: string): number {
  const ms = parseIsoDate(text);
  if (Number.isNaN(ms)) throw new InvalidArgumentError('Not an ISO 8601 date or date-time (2026-05-01 or 2026-05-01T12:00:00Z).');
  return ms;
}

export function feedbackCommands(program: Command) {
  const feedback = program.command('feedback').description('ratings of assistant answers (docs/feedback.md)');
  common(feedback.command('export'))
    .description('export every rating with its question, answer, model and user: one record per rating, oldest change first')
    .addOption(new Option('--format <format>', 'jsonl (one JSON object a line) or csv (RFC 4180, with a header)').choices(['jsonl', 'csv']).default('jsonl'))
    .option('--since <date>', 'only ratings set or changed at or after this ISO 8601 date or date-time (UTC unless a zone is given)', parseSince)
    .option('--out <file>', 'write to this file, put in place once complete (default: standard output)')
    .action(
      runAction(async (opts: ExportOptions) => {
        // The file first: an --out that cannot be written is refused before the database is opened.
        const sink = opts.out ? await fileSink(opts.out) : stdoutSink();
        let exported = 0;
        try {
          const { config, store } = await openCliStore(opts);
          if (opts.format === 'csv') await sink.write(csvHeader());
          for await (const records of readFeedbackExport(store, { since: opts.since, handle: config.aiHandle })) {
            await sink.write(records.map(opts.format === 'csv' ? csvLine : jsonlLine).join(''));
            exported += records.length;
          }
          await sink.finish();
        } catch (err) {
          await sink.abandon();
          throw err;
        }
        if (opts.out) output(opts, { exported, out: opts.out }, `exported ${exported} rating(s) to ${opts.out}`);
      }),
    );
}

interface Sink {
  write(text: string): Promise<void>;
  finish(): Promise<void>;
  abandon(): Promise<void>;
}

/** Standard output, waiting when the reader is behind so pages do not pile up in memory. */
function stdoutSink(): Sink {
  return {
    async write(text) {
      if (!process.stdout.write(text)) await once(process.stdout, 'drain');
    },
    async finish() {},
    async abandon() {},
  };
}

/** A file written under a temporary name and renamed when complete: FILE only ever holds a whole export. */
async function fileSink(file: string): Promise<Sink> {
  const partial = partialName(file, 'feedback-export');
  const handle = await open(partial, 'w').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`--out ${file} cannot be written: ${err.code ?? err.message}`);
  });
  return {
    async write(text) {
      await handle.write(text);
    },
    async finish() {
      await handle.sync();
      await handle.close();
      await rename(partial, file);
    },
    async abandon() {
      await handle.close().catch(() => undefined);
      removePartial(partial);
    },
  };
}
