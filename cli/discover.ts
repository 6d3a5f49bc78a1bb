import type { Command } from 'commander';
import { discoverServers } from '../src/connections/discover';
import { cliConfig, common, output, runAction, type CommonOptions } from './context';

/**
 * `parley connection discover`: the AI servers answering on this machine's loopback, as the
 * setup page and `admin/discoverServers` find them, each with the command that adds it.
 * The `connection` group belongs to the connections commands; this joins it when it exists (it
 * must then be registered first, cli/main.ts) and makes it otherwise.
 */
export function discoverCommand(program: Command) {
  const group = program.commands.find((c) => c.name() === 'connection') ?? program.command('connection').description('connections to AI servers');
  common(group.command('discover'))
    .description('look for AI servers on this machine (127.0.0.1 and ::1 only) and print what answered, with its models')
    .action(
      runAction(async (opts: CommonOptions) => {
        const config = cliConfig(opts);
        const found = await discoverServers({ extraPorts: config.discoverPorts, skipPorts: config.port ? [config.port] : [] });
        const lines = found.servers.flatMap((s) => [
          `${s.label}${s.version ? ` ${s.version}` : ''} at ${s.host === '::1' ? '[::1]' : s.host}:${s.port}`,
          ...s.connections.flatMap((c) => [
            `  ${c.kind}: ${c.models.length ? c.models.join(', ') : '(no models yet)'}${c.voices?.length ? `; voices ${c.voices.join(', ')}` : ''}`,
            `    ${c.addCommand}`,
          ]),
        ]);
        const none = `no AI server answered on ports ${found.ports.join(', ')} of this machine (PARLEY_DISCOVER_PORTS adds more)`;
        const odd = found.unrecognised.map((u) => `port ${u.port} answered, but not as an AI server Parley knows`);
        output(opts, found, [...(lines.length ? lines : [none]), ...odd].join('\n'));
      }),
    );
}
