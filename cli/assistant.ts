import type { Command } from 'commander';
import { newId } from '../src/ids';
import { AppError } from '../src/http/errors';
import { compileInput } from '../src/http/body';
import { createConnections } from '../src/connections/resolver';
import { findAssistantById, insertAssistant, deleteAssistant, listAssistantsFor, updateAssistant } from '../src/assistants/assistant.store';
import { assistantView, checkModel, changeOf, CreateInput, fieldsOf, sharing, tiersFor, UpdateInput } from '../src/assistants/assistants.routes';
import { deleteAvatar, saveAvatar } from '../src/assistants/avatar.store';
import { makeAvatar } from '../src/assistants/avatar-image';
import { checkSharedAssistantResources, liveResources } from '../src/assistants/assistant-resources';
import type { Assistant } from '../src/db/schema';
import { common, openCliStore, output, runAction, CliError, type CommonOptions } from './context';

/**
 * `parley assistant`: the shared assistants admins offer (docs/assistants.md), through the same
 * validators, model check and units of work as `assistants/*`. Users' own assistants are theirs:
 * the CLI lists and changes shared ones only.
 */
/** No user's id: listAssistantsFor then gives the shared ones alone. */
const NOBODY = '';

async function open(opts: CommonOptions) {
  const { config, store, bus } = await openCliStore(opts);
  return { config, store, connections: createConnections({ config, store, bus, now: Date.now, instanceId: newId() }) };
}

/** The API's 400 as the CLI's error: each field and what is wrong with it. */
async function asCliError<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const issues = (err.data as { issues?: { path: (string | number)[]; message: string }[] }).issues ?? [];
    throw new CliError(issues.length ? issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ') : err.message);
  }
}

/** As the API shows it to an admin, with its knowledge files and MCP servers as they are now. */
async function viewsOf(store: Awaited<ReturnType<typeof open>>['store'], list: Assistant[]) {
  const live = await store.read((tx) => liveResources(tx, list));
  return list.map((a) => ({ ...assistantView(a, { id: NOBODY, subscriptionTier: '', isAdmin: true }), ...live.get(a.id)! }));
}
const view = async (store: Awaited<ReturnType<typeof open>>['store'], a: Assistant) => (await viewsOf(store, [a]))[0]!;
const line = (a: Assistant) =>
  `${a.id}  ${a.name}  ${a.visibility === 'tiers' ? `tiers ${a.tiers.join(',') || '-'}` : 'everyone'}  ${a.model ?? 'default model'}${a.avatarVersion ? '  avatar' : ''}${a.knowledgeFileIds.length ? `  knowledge ${a.knowledgeFileIds.length}` : ''}${a.mcpServerIds ? `  mcp ${a.mcpServerIds.length ? a.mcpServerIds.length : 'none'}` : ''}`;

const collect = (v: string, all: string[] = []) => [...all, v];
const list = (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean);
const number = (v: string) => (v === 'none' ? null : Number(v));

interface FieldOptions {
  name?: string;
  description?: string;
  instructions?: string;
  instructionsFile?: string;
  model?: string;
  tools?: string;
  starter?: string[];
  tiers?: string;
  temperature?: string;
  topP?: string;
  maxOutputTokens?: string;
  avatar?: string | false;
  knowledge?: string;
  mcpServers?: string;
}

function fieldOptions(cmd: Command): Command {
  return cmd
    .option('--description <text>', 'what it is for (shown on an empty chat)')
    .option('--instructions <text>', 'added to Parley\'s system prompt at each of its turns')
    .option('--instructions-file <file>', 'the instructions from a file')
    .option('--model <id>', 'a catalogue id (parley connection models), or "default"')
    .option('--tools <list>', 'tool sources and names, comma-separated; "all" (whatever the admin allows) or "none"')
    .option('--starter <text>', 'a starter prompt (repeat, at most 4)', collect)
    .option('--tiers <list>', 'only for users of these subscription tiers (comma-separated); "everyone" for all')
    .option('--temperature <n>', 'sampling temperature 0–2, or "none"')
    .option('--top-p <n>', 'top_p 0–1, or "none"')
    .option('--max-output-tokens <n>', 'the longest answer in tokens, or "none"')
    .option('--knowledge <ids>', 'documents it always searches: file ids of an admin\'s uploads, comma-separated; "none" for none')
    .option('--mcp-servers <ids>', 'the admin\'s MCP servers whose tools it gets (parley mcp list), comma-separated; "all" (whatever its user has) or "none"')
    .option('--avatar <image>', 'an image file, made a 128-pixel square')
    .option('--no-avatar', 'remove the avatar (set)');
}

/** The options as the API's input: only what was given. */
async function inputOf(opts: FieldOptions): Promise<Record<string, unknown>> {
  if (opts.instructions !== undefined && opts.instructionsFile) throw new CliError('--instructions and --instructions-file exclude each other');
  const instructions = opts.instructionsFile ? await Bun.file(opts.instructionsFile).text() : opts.instructions;
  const given = opts.temperature !== undefined || opts.topP !== undefined || opts.maxOutputTokens !== undefined;
  return {
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.description !== undefined ? { description: opts.description } : {}),
    ...(instructions !== undefined ? { instructions } : {}),
    ...(opts.model !== undefined ? { model: opts.model === 'default' ? null : opts.model } : {}),
    ...(opts.tools !== undefined ? { tools: opts.tools === 'all' ? null : opts.tools === 'none' ? [] : list(opts.tools) } : {}),
    ...(opts.starter ? { starters: opts.starter } : {}),
    ...(opts.knowledge !== undefined ? { knowledgeFileIds: opts.knowledge === 'none' ? [] : list(opts.knowledge) } : {}),
    ...(opts.mcpServers !== undefined ? { mcpServerIds: opts.mcpServers === 'all' ? null : opts.mcpServers === 'none' ? [] : list(opts.mcpServers) } : {}),
    ...(opts.tiers !== undefined ? (opts.tiers === 'everyone' ? { visibility: 'everyone' } : { visibility: 'tiers', tiers: list(opts.tiers) }) : {}),
    ...(given
      ? {
          parameters: {
            ...(opts.temperature !== undefined ? { temperature: number(opts.temperature) } : {}),
            ...(opts.topP !== undefined ? { topP: number(opts.topP) } : {}),
            ...(opts.maxOutputTokens !== undefined ? { maxOutputTokens: number(opts.maxOutputTokens) } : {}),
          },
        }
      : {}),
  };
}

/** A shared assistant by id; someone's own is not the CLI's. */
async function sharedAssistant(store: Awaited<ReturnType<typeof open>>['store'], id: string): Promise<Assistant> {
  const a = await store.read((tx) => findAssistantById(tx, id));
  if (!a || a.ownerId !== null) throw new CliError(`no shared assistant ${id} (parley assistant list)`);
  return a;
}

async function applyAvatar(deps: Awaited<ReturnType<typeof open>>, a: Assistant, avatar: string | false | undefined): Promise<Assistant> {
  if (avatar === false) return deps.store.write((tx) => deleteAvatar(tx, a.id, Date.now()));
  if (avatar === undefined) return a;
  const file = Bun.file(avatar);
  if (!(await file.exists())) throw new CliError(`no file ${avatar}`);
  const made = await makeAvatar(`data:application/octet-stream;base64,${(await file.bytes()).toBase64()}`, { maxBytes: deps.config.imageMaxBytes, maxPixels: deps.config.imageMaxPixels });
  if ('error' in made) throw new CliError(`--avatar: ${made.error}`);
  const version = new Bun.CryptoHasher('sha256').update(made.webp).digest('hex').slice(0, 16);
  return deps.store.write((tx) => saveAvatar(tx, a.id, made.webp.toBase64(), version, Date.now()));
}

export function assistantCommands(program: Command) {
  const assistant = program.command('assistant').description('manage the shared assistants (users keep their own in the web app)');
  const createValid = compileInput<typeof CreateInput.static>(CreateInput);
  const updateValid = compileInput<typeof UpdateInput.static>(UpdateInput);

  common(assistant.command('list'))
    .description('list the shared assistants')
    .action(
      runAction(async (opts: CommonOptions) => {
        const { store } = await open(opts);
        const rows = (await store.read((tx) => listAssistantsFor(tx, NOBODY))).filter((a) => a.ownerId === null);
        output(opts, await viewsOf(store, rows), rows.length ? rows.map(line).join('\n') : 'no shared assistants');
      }),
    );

  fieldOptions(common(assistant.command('create')))
    .description('share an assistant with every user, or with some tiers (--tiers)')
    .requiredOption('--name <name>', 'its name (1–100 characters)')
    .action(
      runAction(async (opts: CommonOptions & FieldOptions) => {
        const deps = await open(opts);
        const input = await asCliError(async () => createValid({ ...(await inputOf(opts)), shared: true }));
        const who = sharing(true, input.visibility, input.tiers);
        await asCliError(() => checkModel(deps, input.model, tiersFor({ subscriptionTier: '' }, who)));
        await asCliError(() => checkSharedAssistantResources(deps, input));
        const made = await deps.store.write((tx) => insertAssistant(tx, null, fieldsOf(input, who), Date.now()));
        const a = await applyAvatar(deps, made, opts.avatar === false ? undefined : opts.avatar);
        output(opts, await view(deps.store, a), `created shared assistant ${a.name} (${a.id})`);
      }),
    );

  fieldOptions(common(assistant.command('set')))
    .description('change a shared assistant: only the options given')
    .requiredOption('--id <id>', 'the assistant (parley assistant list)')
    .option('--name <name>', 'its name (1–100 characters)')
    .action(
      runAction(async (opts: CommonOptions & FieldOptions & { id: string }) => {
        const deps = await open(opts);
        const a = await sharedAssistant(deps.store, opts.id);
        const given = await inputOf(opts);
        // One setting given changes that one: the others stay (the API's `parameters` replaces all three).
        if (given.parameters) given.parameters = { ...a.parameters, ...given.parameters };
        const { assistantId: _, ...input } = await asCliError(async () => updateValid({ assistantId: a.id, ...given }));
        await asCliError(() => checkSharedAssistantResources(deps, input, a));
        const { change, checkTiers } = changeOf(a, { subscriptionTier: '' }, input);
        if (checkTiers) await asCliError(() => checkModel(deps, change.model === undefined ? a.model : change.model, checkTiers));
        const updated = Object.keys(change).length ? await deps.store.write((tx) => updateAssistant(tx, a.id, change, Date.now())) : a;
        const done = await applyAvatar(deps, updated, opts.avatar);
        output(opts, await view(deps.store, done), `updated shared assistant ${done.name}`);
      }),
    );

  common(assistant.command('remove'))
    .description('delete a shared assistant (its conversations go on with Parley itself)')
    .requiredOption('--id <id>', 'the assistant (parley assistant list)')
    .action(
      runAction(async (opts: CommonOptions & { id: string }) => {
        const { store } = await open(opts);
        const a = await sharedAssistant(store, opts.id);
        await store.write((tx) => deleteAssistant(tx, a.id));
        output(opts, { success: true }, `removed shared assistant ${a.name}`);
      }),
    );
}
