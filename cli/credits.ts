import type { Command } from 'commander';
import { grantCredits } from '../src/credits/credit.store';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';
import { requireUser } from './user';

export function creditCommands(program: Command) {
  const credits = program.command('credits').description('bonus credits');
  common(credits.command('grant'))
    .description("add bonus credits to a user's ledger")
    .requiredOption('--email <email>', 'the user')
    .requiredOption('--amount <n>', 'credits to grant (a positive integer)')
    .option('--reason <reason>', 'why, kept in the ledger', 'admin_grant')
    .action(
      runAction(async (opts: CommonOptions & { email: string; amount: string; reason: string }) => {
        // Digits only: Number() would also take "0x10" (16), "1e3" or " 5 ".
        const amount = /^\d+$/.test(opts.amount) ? Number(opts.amount) : Number.NaN;
        if (!Number.isSafeInteger(amount) || amount <= 0) throw new CliError(`--amount must be a positive integer, got ${opts.amount}`);
        const { store } = await openCliStore(opts);
        const user = await requireUser(store, opts.email);
        const { bonusBalance } = await store.write((tx) => grantCredits(tx, { userId: user.id, amount, reason: opts.reason }, Date.now()));
        output(opts, { bonusBalance }, `granted ${amount} to ${user.email}; bonus balance ${bonusBalance}`);
      }),
    );
}
