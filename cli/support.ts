import { Option, type Command } from 'commander';
import { createExpoClient } from '../src/notifications/expo-client';
import { createLogger } from '../src/log';
import { iso } from '../src/ids';
import type { SupportMessage } from '../src/db/schema';
import { countUnreadSupportMessages, listSupportThreadsForAdmins, type SupportThreadWithUser } from '../src/support/support.store';
import { SupportRefusal, readThreadAsAdmin, replyAsAdmin, supportLimitsOf } from '../src/support/support.rules';
import { pushSupportReply, type SupportPushOutcome } from '../src/support/support-push';
import { adminMessageView, adminThreadView } from '../src/support/support.view';
import { common, openCliStore, output, runAction, type CommonOptions } from './context';

/**
 * This group's refusals (an unknown thread, a bad value) exit 1, as commander's own errors about
 * flags do (docs/support.md): `runAction` prints the message of an error it does not class as a
 * settings or database refusal and exits 1.
 */
class SupportCliError extends Error {}

const STATUSES = ['open', 'closed', 'all'] as const;

const unreadLabel = (n: number) => (n ? `  ${n} unread` : '');

function threadLine(th: SupportThreadWithUser, unread: number): string {
  return `${th.id}  ${th.status}  ${iso(th.lastMessageAt)}  ${th.userEmail}  ${JSON.stringify(th.subject)}${unreadLabel(unread)}`;
}

function messageBlock(m: SupportMessage, userEmail: string): string {
  const who = m.author === 'user' ? userEmail : `admin${m.adminName ? ` ${m.adminName}` : ''}${m.adminEmail ? ` <${m.adminEmail}>` : ''}`;
  return `[${iso(m.createdAt)}] ${who}:\n${m.body.replace(/^/gm, '  ')}`;
}

function pushLine(p: SupportPushOutcome): string {
  if (p.status === 'disabled') return 'push: disabled (PARLEY_PUSH_ENABLED=false)';
  if (p.status === 'no_devices') return 'push: the user has no device registered';
  if (!p.report) return `push failed: ${p.error}`;
  const r = p.report;
  const counts = `${r.sent} of ${r.tokenCount} devices${r.errors ? `, ${r.errors} errors` : ''}${r.invalidTokens ? `, ${r.invalidTokens} unregistered` : ''}`;
  return `push ${p.status}: ${counts}${p.error ? ` (${p.error})` : ''}`;
}

export function supportCommands(program: Command) {
  const support = program.command('support').description("users' support conversations: read and answer them");

  common(support.command('list'))
    .description('support threads of every user, newest activity first, with what admins have not read')
    .addOption(new Option('--status <status>', 'which threads').choices(STATUSES).default('open'))
    .option('--limit <n>', 'at most this many threads', '100')
    .action(
      runAction(async (opts: CommonOptions & { status: (typeof STATUSES)[number]; limit: string }) => {
        const limit = /^\d+$/.test(opts.limit) ? Number(opts.limit) : Number.NaN;
        if (!Number.isSafeInteger(limit) || limit < 1) throw new SupportCliError(`--limit must be a positive integer, got ${opts.limit}`);
        const { store } = await openCliStore(opts);
        const { threads, unread } = await store.read(function* (tx) {
          const threads = yield* listSupportThreadsForAdmins(tx, { limit, status: opts.status === 'all' ? undefined : opts.status });
          return { threads, unread: yield* countUnreadSupportMessages(tx, threads.map((th) => th.id), 'admin') };
        });
        const count = (id: string) => unread.get(id) ?? 0;
        output(
          opts,
          threads.map((th) => adminThreadView(th, count(th.id))),
          threads.length ? threads.map((th) => threadLine(th, count(th.id))).join('\n') : `no ${opts.status === 'all' ? '' : `${opts.status} `}support threads`,
        );
      }),
    );

  common(support.command('show'))
    .description("a thread's messages, oldest first; marks the user's messages read by the admins")
    .argument('<threadId>', 'the thread (from `parley support list`)')
    .action(
      runAction(async (threadId: string, opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        const shown = await store.write((tx) => readThreadAsAdmin(tx, threadId, Date.now()));
        if (!shown) throw new SupportCliError(`no support thread ${threadId}`);
        const { thread, messages } = shown;
        output(
          opts,
          { thread: adminThreadView(thread, 0), messages: messages.map(adminMessageView) },
          [`${JSON.stringify(thread.subject)} (${thread.status}) from ${thread.userEmail}, thread ${thread.id}`, ...messages.map((m) => messageBlock(m, thread.userEmail))].join('\n\n'),
        );
      }),
    );

  common(support.command('reply'))
    .description("answer a thread; the user's devices get a push when push is on (a push that fails does not undo the answer)")
    .argument('<threadId>', 'the thread (from `parley support list`)')
    .requiredOption('--message <text>', 'the answer')
    .option('--close', 'close the thread with this answer (otherwise a closed thread opens again)')
    .option('--name <name>', 'your name, shown to the user with the answer')
    .option('--admin-email <email>', 'your e-mail, kept with the answer for the admins (never shown to the user)')
    .action(
      runAction(async (threadId: string, opts: CommonOptions & { message: string; close?: boolean; name?: string; adminEmail?: string }) => {
        const { store, config } = await openCliStore(opts);
        const input = { message: opts.message, close: opts.close, adminName: opts.name?.trim() || undefined, adminEmail: opts.adminEmail?.trim() || undefined };
        let posted;
        try {
          posted = await store.write((tx) => replyAsAdmin(tx, threadId, input, supportLimitsOf(config), Date.now()));
        } catch (err) {
          if (err instanceof SupportRefusal) throw new SupportCliError(`--message: ${err.message}`);
          throw err;
        }
        if (!posted) throw new SupportCliError(`no support thread ${threadId}`);
        // The push's warnings are in its outcome, printed below: stderr keeps errors only.
        const log = createLogger(config.logLevel === 'debug' ? 'debug' : 'error');
        const push = await pushSupportReply({ store, log, push: config.pushEnabled ? () => createExpoClient(config) : undefined }, posted.thread, posted.message);
        output(
          opts,
          { thread: adminThreadView(posted.thread, 0), message: adminMessageView(posted.message), push },
          `replied to ${posted.thread.id} (${posted.thread.userEmail}); the thread is ${posted.thread.status}\n${pushLine(push)}`,
        );
      }),
    );
}
