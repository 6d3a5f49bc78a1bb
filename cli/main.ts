#!/usr/bin/env bun
import { Command } from 'commander';
import { versionLine } from '../src/version';
import { serveCommand } from './serve';
import { dbCommands } from './db';
import { userCommands } from './user';
import { credentialCommands } from './credentials';
import { loginLinkCommand } from './login-link';
import { setupLinkCommand } from './setup-link';
import { creditCommands } from './credits';
import { usageCommands } from './usage';
import { tierCommands } from './tier';
import { priceCommands } from './price';
import { notifyCommands } from './notify';
import { supportCommands } from './support';
import { doctorCommand } from './doctor';
import { feedbackCommands } from './feedback';
import { newsCommands } from './news';
import { connectionCommands } from './connection';
import { mcpCommands } from './mcp';
import { assistantCommands } from './assistant';
import { miniAppCommands } from './miniapps';
import { discoverCommand } from './discover';
import { sandboxCommand } from './sandbox';

// `parley user list | head -1`: once the reader has closed the pipe, stop quietly like any Unix
// tool instead of dying on the write with a stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const program = new Command('parley')
  .description('Parley: a self-hostable back end for conversational AI apps')
  .version(versionLine(), '-v, --version', 'print the version and the commit it was built from')
  .showHelpAfterError();

serveCommand(program);
dbCommands(program);
userCommands(program);
credentialCommands(program);
loginLinkCommand(program);
setupLinkCommand(program);
creditCommands(program);
usageCommands(program);
tierCommands(program);
priceCommands(program);
notifyCommands(program);
supportCommands(program);
doctorCommand(program);
feedbackCommands(program);
newsCommands(program);
connectionCommands(program);
miniAppCommands(program);
mcpCommands(program);
assistantCommands(program);
// After the `connection` group's own commands: it joins that group (cli/discover.ts).
discoverCommand(program);
sandboxCommand(program);

await program.parseAsync(process.argv);
