import type { Config } from '../config';
import type { ConnectionRow, ModelSettingRow } from '../db/schema';
import type { Store } from '../db/work';
import type { Bus } from '../pubsub/bus';
import type { AiProvider } from '../ai/ai.types';
import type { SearchProvider } from '../ai/search';
import { AppError } from '../http/errors';
import { listConnectionRows, listModelSettingRows, readServerSetting } from './connection.store';
import { seedEnvConnections, envConnections } from './seed-env';
import { createSealer, type Sealer } from './seal';
import { chatAdapterOf, searchAdapter, serviceSettings, videoService, type OpenConnection, type VideoService } from './adapters';
import { chatModelOf, researchModelOf } from './connection-options';
import { allowedFor, catalogueId, connectionModels, ordered, type CatalogueEntry } from './catalogue';
import { createModelLists, type ModelListEntry, type ModelLists } from './model-lists';

/**
 * `deps.connections`: the one way a domain reaches an outside service (STYLE.md §18). Rows are
 * read once and kept until the bus says they changed (topic `connections`, which the cluster bus
 * carries to every instance; a gap on the bus drops them too); adapters are built once per row
 * version. Resolving a turn's model is a few map lookups on that state (bench/RESULTS.md).
 */
export const CONNECTIONS_TOPIC = 'connections';
/** How long `chat/listModels` waits for a connection's first model list (bench/RESULTS.md, "Connections"). */
const CATALOGUE_WAIT_MS = 1000;
/** What a list not answered yet counts as: unavailable, for now. */
const STILL_ASKING: ModelListEntry = { probe: { reachable: false, latencyMs: 0, error: 'no answer yet' }, at: 0 };
/** How long rows read are used before they are read again in the background. */
const STATE_TTL_MS = 10_000;

export type Purpose = 'chat' | 'research' | 'group' | 'title';
export const PURPOSES: Purpose[] = ['chat', 'research', 'group', 'title'];
export type Defaults = Partial<Record<Purpose, string>>;
export const DEFAULTS_KEY = 'default_models';

export interface ChatTarget {
  provider: AiProvider;
  /** The upstream model id. */
  model: string;
  /** The catalogue id (`<connection>/<model>`), what a response records. */
  id: string;
  connection: ConnectionRow;
}

/** Who asks: their tier decides the models they may use. */
export interface Asker {
  subscriptionTier?: string;
}

export interface Connections {
  /** Seed the environment's rows and read them (the server calls it at start; otherwise the first use does). */
  ready(): Promise<void>;
  /**
   * The provider and upstream model for a turn. `modelId` undefined: the default for `purpose`.
   * Undefined when no chat connection is enabled (the turn then fails in its stream, as before);
   * a 400 naming the problem when the model is unknown, hidden, disabled or not for the asker's tier.
   */
  chat(modelId: string | undefined, purpose: Purpose, asker?: Asker): Promise<ChatTarget | undefined>;
  /** Whether any chat connection is enabled (cheap: no model list is asked). */
  hasChat(): Promise<boolean>;
  /** The settings the kind's client reads, or undefined when no connection of the kind is enabled. */
  embeddings(): Promise<Config | undefined>;
  images(): Promise<Config | undefined>;
  speech(kind: 'stt' | 'tts'): Promise<Config | undefined>;
  search(): Promise<SearchProvider | undefined>;
  /** The first enabled `video` connection (docs/video.md), or undefined. */
  video(): Promise<VideoService | undefined>;
  /** Every enabled chat connection's models; with `asker`, only those they may use and not hidden. */
  catalogue(asker?: Asker): Promise<{ models: CatalogueEntry[]; defaults: Required<Defaults> }>;
  /** Every row (admins' view and health). */
  rows(): Promise<ConnectionRow[]>;
  /** Whether a row has a credential (the environment's rows: whether the setting is set). */
  hasCredential(row: ConnectionRow): boolean;
  /** A row's credential opened, for an adapter or a health check. */
  open(row: ConnectionRow): Promise<OpenConnection>;
  /** The per-connection model lists (health checks record what they learn there). */
  lists: ModelLists;
  sealer: Sealer;
  /** After a write: drop what this instance holds and tell the others. */
  changed(): void;
}

interface State {
  rows: ConnectionRow[];
  settings: ModelSettingRow[];
  defaults: Defaults;
}

const unknownModel = (message: string) => new AppError('BAD_REQUEST', { message, data: { issues: [{ path: ['model'], message }] } });

/** `seed: false`: read the rows as they are, write nothing (doctor on a read-only database). */
export function createConnections(deps: { config: Config; store: Store; bus: Bus; now: () => number; instanceId: string; seed?: boolean }): Connections {
  const { config, store, bus } = deps;
  const sealer = createSealer(config);
  const lists = createModelLists(deps.now);
  const adapters = new Map<string, { key: string; value: Promise<unknown> }>();
  let state: Promise<State> | undefined;
  /** Connections (id:version) whose first list the catalogue already waited for once: never again. */
  const waitedFor = new Set<string>();
  let loadedAt = 0;
  let seeded = deps.seed === false;

  const load = async (): Promise<State> => {
    if (!seeded) {
      const changed = await store.write((tx) => seedEnvConnections(tx, config, deps.now()));
      seeded = true;
      if (changed) bus.publish(CONNECTIONS_TOPIC, { from: deps.instanceId });
    }
    return store.read(function* (tx) {
      const rows = yield* listConnectionRows(tx);
      const settings = yield* listModelSettingRows(tx);
      const defaults = (yield* readServerSetting<Defaults>(tx, DEFAULTS_KEY)) ?? {};
      return { rows, settings, defaults };
    }).then((s) => {
      // Adapters of removed rows go.
      for (const id of adapters.keys()) if (!s.rows.some((r) => r.id === id)) adapters.delete(id);
      return s;
    });
  };
  /**
   * The rows as last read. Past STATE_TTL_MS they are read again behind the answer (a turn never
   * waits for it): what the bus cannot carry (an admin command beside a SQLite server) shows so.
   * `generation` counts drops: a read begun before one must not put older rows back.
   */
  let generation = 0;
  let refreshing = false;
  const current = (): Promise<State> => {
    if (state && !refreshing && deps.now() - loadedAt > STATE_TTL_MS) {
      const gen = generation;
      refreshing = true;
      load()
        .then((s) => {
          if (gen === generation) state = Promise.resolve(s);
        }, () => {})
        .finally(() => {
          refreshing = false;
          loadedAt = deps.now();
        });
    }
    if (!state) {
      loadedAt = deps.now();
      const next = load();
      state = next;
      next.catch(() => {
        if (state === next) state = undefined;
      });
    }
    return state;
  };
  const drop = () => {
    generation++;
    state = undefined;
  };
  bus.subscribe<{ from?: string }>(CONNECTIONS_TOPIC, (e) => {
    if (e?.from !== deps.instanceId) drop();
  });
  bus.onGap(drop);

  const envCredential = new Map(envConnections(config).map((e) => [e.name, e.credential] as const));
  const open = async (row: ConnectionRow): Promise<OpenConnection> => {
    // The environment's rows keep their credential in the environment, never in the database.
    if (row.source === 'env') return { row, apiKey: envCredential.get(row.name)?.(config) };
    return { row, apiKey: row.credential ? await sealer.open(row.credential) : undefined };
  };

  /** A row's adapter, built once per version (and per search connection, which the research loop uses). */
  function adapter<T>(row: ConnectionRow, extraKey: string, build: (c: OpenConnection) => T | Promise<T>): Promise<T> {
    const key = `${row.version}:${extraKey}`;
    const hit = adapters.get(row.id);
    if (hit?.key === key) return hit.value as Promise<T>;
    const value = open(row).then(build);
    adapters.set(row.id, { key, value });
    value.catch(() => adapters.delete(row.id));
    return value;
  }

  const enabled = (s: State, kind: ConnectionRow['kind']) => s.rows.filter((r) => r.enabled && r.kind === kind);
  const firstOf = async (kind: ConnectionRow['kind']) => enabled(await current(), kind)[0];

  async function searchOf(s: State): Promise<SearchProvider | undefined> {
    const row = enabled(s, 'search')[0];
    return row ? adapter(row, '', searchAdapter) : undefined;
  }

  /**
   * The defaults: the admin's, while their connection is an enabled chat connection (one removed
   * or disabled since must not leave every turn without a model), else the first chat
   * connection's own models (the environment's first).
   */
  function defaultsOf(s: State): Required<Defaults> {
    const chats = enabled(s, 'chat').sort((a, b) => Number(b.source === 'env') - Number(a.source === 'env'));
    const first = chats[0];
    const offered = (id: string | undefined) => (id && chats.some((r) => id.startsWith(`${r.name}/`)) ? id : undefined);
    const chat = offered(s.defaults.chat) ?? (first ? catalogueId(first, chatModelOf(first)) : '');
    const research = offered(s.defaults.research) ?? (first ? catalogueId(first, researchModelOf(first, config.researchModel)) : '');
    return { chat, research, group: offered(s.defaults.group) ?? chat, title: offered(s.defaults.title) ?? chat };
  }

  async function entriesOf(s: State, row: ConnectionRow, wait: boolean): Promise<CatalogueEntry[]> {
    const list = wait ? await lists.get(row, () => open(row).then((c) => c.apiKey)) : lists.peek(row);
    return connectionModels(row, list, s.settings);
  }

  async function chat(modelId: string | undefined, purpose: Purpose, asker?: Asker): Promise<ChatTarget | undefined> {
    const s = await current();
    const chats = enabled(s, 'chat');
    if (!chats.length) return undefined;
    const isDefault = modelId === undefined;
    const id = modelId ?? defaultsOf(s)[purpose];
    const slash = id.indexOf('/');
    const named = slash > 0 ? s.rows.find((r) => r.name === id.slice(0, slash)) : undefined;
    let row: ConnectionRow;
    let model: string;
    if (named) {
      if (named.kind !== 'chat') throw unknownModel(`"${id}" is not a chat model: ${named.name} is a ${named.kind} connection.`);
      if (!named.enabled) throw unknownModel(`The model "${id}" is not available: its connection ${named.name} is disabled.`);
      row = named;
      model = id.slice(slash + 1);
    } else {
      // A plain upstream id (what clients sent before connections): the one connection that offers it.
      const pinned = chats.filter((r) => pinnedModels(r, s).includes(id));
      const offering = pinned.length ? pinned : (await Promise.all(chats.map(async (r) => ((await entriesOf(s, r, true)).some((e) => e.model === id) ? [r] : [])))).flat();
      if (offering.length > 1) throw unknownModel(`Several connections offer "${id}": name it with its connection (${offering.map((r) => catalogueId(r, id)).join(', ')}).`);
      const sole = chats.length === 1 && !lists.peek(chats[0]!)?.probe.models ? chats[0] : undefined;
      const found = offering[0] ?? sole;
      if (!found) throw unknownModel(`Unknown model "${id}": chat/listModels lists the models of this server.`);
      row = found;
      model = id;
    }
    // A model named with its connection: that connection must list it, when it lists models at all
    // (a server without a list, or one that did not answer, is taken at its word: the turn will say).
    if (!isDefault && named && !pinnedModels(row, s).includes(model)) {
      const known = (await lists.get(row, () => open(row).then((c) => c.apiKey))).probe.models;
      if (known && !known.includes(model)) throw unknownModel(`Unknown model "${id}": ${row.name} does not list it.`);
    }
    const setting = s.settings.find((x) => x.connectionId === row.id && x.model === model);
    if (!isDefault && setting?.hidden) throw unknownModel(`The model "${id}" is not offered on this server.`);
    if (setting && !allowedFor(setting, asker?.subscriptionTier))
      throw unknownModel(`The model "${catalogueId(row, model)}" is not included in your subscription (${asker?.subscriptionTier ?? 'none'}).`);
    const search = enabled(s, 'search')[0];
    const provider = await adapter(row, search ? `${search.id}:${search.version}` : '', async (c) => chatAdapterOf(c, config, await searchOf(s)));
    return { provider, model, id: catalogueId(row, model), connection: row };
  }

  /** The models a connection resolves without asking it: its default, research model and the admin's rows. */
  function pinnedModels(row: ConnectionRow, s: State): string[] {
    return [chatModelOf(row), researchModelOf(row, config.researchModel), ...s.settings.filter((x) => x.connectionId === row.id).map((x) => x.model)].filter(Boolean);
  }

  const service = async (kind: 'embeddings' | 'images' | 'stt' | 'tts') => {
    const row = await firstOf(kind);
    return row ? adapter(row, '', (c) => serviceSettings(c, config)) : undefined;
  };

  return {
    async ready() {
      await current();
    },
    chat,
    hasChat: async () => enabled(await current(), 'chat').length > 0,
    embeddings: () => service('embeddings'),
    images: () => service('images'),
    speech: (kind) => service(kind),
    search: async () => searchOf(await current()),
    async video() {
      const row = await firstOf('video');
      return row ? adapter(row, '', (c) => videoService(c, config)) : undefined;
    },
    async catalogue(asker) {
      const s = await current();
      // A list never had is waited for CATALOGUE_WAIT_MS at most: past that its connection is
      // listed unavailable now, and its answer, when it comes, is kept for the next call.
      const all = (
        await Promise.all(
          enabled(s, 'chat').map((r) =>
            waitedFor.has(`${r.id}:${r.version}`) && !lists.peek(r)
              ? connectionModels(r, STILL_ASKING, s.settings)
              : Promise.race([
                  entriesOf(s, r, true),
                  Bun.sleep(CATALOGUE_WAIT_MS).then(() => (waitedFor.add(`${r.id}:${r.version}`), connectionModels(r, lists.peek(r) ?? STILL_ASKING, s.settings))),
                ]),
          ),
        )
      ).flat();
      const defaults = defaultsOf(s);
      const models = ordered(asker ? all.filter((e) => !e.hidden && allowedFor(e, asker.subscriptionTier)) : all);
      return { models, defaults };
    },
    rows: async () => (await current()).rows,
    open,
    hasCredential: (row) => (row.source === 'env' ? !!envCredential.get(row.name)?.(config) : row.credential !== null),
    lists,
    sealer,
    changed() {
      drop();
      adapters.clear();
      bus.publish(CONNECTIONS_TOPIC, { from: deps.instanceId });
    },
  };
}
