#!/usr/bin/env bun
import { Command } from 'commander';
import pkg from '../package.json' with { type: 'json' };
import { serveCommand } from './serve';
import { dbCommands } from './db';
import { userCommands } from './user';
import { credentialCommands } from './credentials';
import { creditCommands } from './credits';
import { notifyCommands } from './notify';

const program = new Command('parley')
  .description('Parley: a self-hostable back end for conversational AI apps')
  .version(pkg.version, '-v, --version')
  .showHelpAfterError();

serveCommand(program);
dbCommands(program);
userCommands(program);
credentialCommands(program);
creditCommands(program);
notifyCommands(program);

await program.parseAsync(process.argv);
