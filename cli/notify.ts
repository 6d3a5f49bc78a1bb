import type { Command } from 'commander';
import { createExpoClient } from '../src/notifications/expo-client';
import { RESEARCH_STATUSES, sendTestResearchPush } from '../src/notifications/research-push';
import type { ResearchStatus } from '../src/notifications/notifier';
import { createLogger } from '../src/log';
import { newId } from '../src/ids';
import { common, openCliStore, runAction, CliError, type CommonOptions } from './context';
import { requireUser } from './user';

export function notifyCommands(program: Command) {
  const notify = program.command('notify').description('push notifications');
  common(notify.command('test'))
    .description("send a synthetic deep-research status push to a user's devices and print the report as JSON")
    .requiredOption('--email <email>', 'the user (any user: the internal-domain rule applies to the API only)')
    .requiredOption('--conversation <id>', 'conversation id carried in the push')
    .requiredOption('--status <status>', RESEARCH_STATUSES.join(' | '))
    .action(
      runAction(async (opts: CommonOptions & { email: string; conversation: string; status: string }) => {
        const status = RESEARCH_STATUSES.find((s) => s === opts.status) as ResearchStatus | undefined;
        if (!status) throw new CliError(`--status must be one of ${RESEARCH_STATUSES.join(', ')}`);
        const { store, config } = await openCliStore(opts);
        const user = await requireUser(store, opts.email);
        if (!config.pushEnabled) throw new CliError('push is disabled (PARLEY_PUSH_ENABLED=false)');
        const push = await createExpoClient(config);
        const report = await sendTestResearchPush(
          { store, log: createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel), push, receiptDelayMs: config.pushReceiptDelayMs },
          { userId: user.id, conversationId: opts.conversation, responseId: `test_${newId()}`, status, title: 'Test notification' },
        );
        process.stdout.write(JSON.stringify(report) + '\n');
        // The report says whether it worked; the exit status says it to scripts too.
        if (!report.ok) process.exitCode = 1;
      }),
    );
}
