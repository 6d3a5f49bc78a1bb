import type { Command } from 'commander';
import { createMiniApp, findMiniAppNamed, listMiniApps, removeMiniApp, updateMiniApp, type MiniAppFields } from '../src/miniapps/miniapp.store';
import { checkMiniAppDescription, checkMiniAppName, checkMiniAppPosition, checkMiniAppUrl, MiniAppRefusal } from '../src/miniapps/miniapp.rules';
import type { MiniApp } from '../src/db/schema';
import type { Store } from '../src/db/work';
import { iso } from '../src/ids';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';

interface AppOptions extends CommonOptions {
  name?: string;
  url?: string;
  icon?: string;
  description?: string;
  position?: string;
}

const appView = (a: MiniApp) => ({ id: a.id, name: a.name, url: a.url, iconUrl: a.iconUrl, description: a.description, position: a.position, createdAt: iso(a.createdAt), updatedAt: iso(a.updatedAt) });
const appLine = (a: MiniApp) => `${a.id}  ${a.position}  ${a.name}  ${a.url}`;

/** The options given, checked (miniapp.rules.ts); an empty --icon or --description clears it. */
function checkedFields(opts: AppOptions): Partial<MiniAppFields & { position: number }> {
  try {
    return {
      ...(opts.name !== undefined ? { name: checkMiniAppName(opts.name) } : {}),
      ...(opts.url !== undefined ? { url: checkMiniAppUrl(opts.url, '--url') } : {}),
      ...(opts.icon !== undefined ? { iconUrl: opts.icon.trim() ? checkMiniAppUrl(opts.icon, '--icon') : null } : {}),
      ...(opts.description !== undefined ? { description: checkMiniAppDescription(opts.description) } : {}),
      ...(opts.position !== undefined ? { position: checkMiniAppPosition(opts.position) } : {}),
    };
  } catch (err) {
    throw err instanceof MiniAppRefusal ? new CliError(err.message) : err;
  }
}

async function refuseTakenName(store: Store, name: string | undefined, exceptId?: string) {
  const other = name === undefined ? undefined : await store.read((tx) => findMiniAppNamed(tx, name, exceptId));
  if (other) throw new CliError(`a mini app named ${JSON.stringify(other.name)} already exists (${other.id})`);
}

function appOptions(cmd: Command): Command {
  return cmd
    .option('--icon <url>', 'its icon: https (http only for localhost)')
    .option('--description <text>', 'one or two sentences, at most 500 characters')
    .option('--position <n>', 'where it is listed: lower first, ties by name (default: after the last)');
}

export function miniAppCommands(program: Command) {
  const apps = program.command('miniapps').description('the mini apps users open from the app (miniApps/list)');

  appOptions(common(apps.command('add')))
    .description('offer a web app to every user')
    .requiredOption('--name <name>', 'unique regardless of case, at most 100 characters')
    .requiredOption('--url <url>', 'https (http only for localhost)')
    .action(
      runAction(async (opts: AppOptions & { name: string; url: string }) => {
        const fields = checkedFields(opts);
        const { store } = await openCliStore(opts);
        await refuseTakenName(store, fields.name);
        const app = await store.write((tx) => createMiniApp(tx, { name: fields.name!, url: fields.url!, iconUrl: fields.iconUrl ?? null, description: fields.description ?? null, position: fields.position }, Date.now()));
        output(opts, appView(app), `added ${app.name} (${app.id}) at position ${app.position}`);
      }),
    );

  appOptions(common(apps.command('set')))
    .description("change a mini app's name, address, icon, description or position")
    .argument('<id>', 'the app, as `miniapps list` shows it')
    .option('--name <name>', 'unique regardless of case')
    .option('--url <url>', 'https (http only for localhost)')
    .action(
      runAction(async (id: string, opts: AppOptions) => {
        const fields = checkedFields(opts);
        if (!Object.keys(fields).length) throw new CliError('nothing to change: give --name, --url, --icon, --description or --position');
        const { store } = await openCliStore(opts);
        await refuseTakenName(store, fields.name, id);
        const app = await store.write((tx) => updateMiniApp(tx, id, fields, Date.now()));
        if (!app) throw new CliError(`no mini app ${id}`);
        output(opts, appView(app), `changed ${app.name} (${app.id})`);
      }),
    );

  common(apps.command('list'))
    .description('list the mini apps in the order users see them')
    .action(
      runAction(async (opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        const rows = await store.read((tx) => listMiniApps(tx));
        output(opts, rows.map(appView), rows.length ? rows.map(appLine).join('\n') : 'no mini apps');
      }),
    );

  common(apps.command('remove'))
    .description('stop offering a mini app')
    .argument('<id>', 'the app, as `miniapps list` shows it')
    .action(
      runAction(async (id: string, opts: CommonOptions) => {
        const { store } = await openCliStore(opts);
        if (!(await store.write((tx) => removeMiniApp(tx, id)))) throw new CliError(`no mini app ${id}`);
        output(opts, { removed: true, id }, `removed ${id}`);
      }),
    );
}
