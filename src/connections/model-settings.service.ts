import type { Store } from '../db/work';
import { AppError } from '../http/errors';
import { findConnection, listModelSettingRows, readServerSetting, upsertModelSetting, writeServerSetting } from './connection.store';
import { ConnectionRefusal } from './connection.service';
import type { CatalogueEntry } from './catalogue';
import { DEFAULTS_KEY, PURPOSES, type Connections, type Defaults, type Purpose } from './resolver';

// The admin's catalogue choices (docs/connections.md, "The model catalogue"), shared by the
// `admin/*` operations and the CLI.

type Deps = { store: Store; connections: Connections; now: () => number };

const settingView = (e: CatalogueEntry) => ({
  id: e.id,
  connection: e.connection,
  model: e.model,
  name: e.name,
  hidden: e.hidden,
  position: e.position,
  capabilities: e.capabilities,
  detected: e.detected,
  overrides: e.overrides,
  tiers: e.tiers,
  available: e.available,
});

export async function listModelSettings(deps: Deps) {
  const { models, defaults } = await deps.connections.catalogue();
  return { models: models.map(settingView), defaults };
}

export interface ModelSettingsInput {
  id: string;
  name?: string | null;
  hidden?: boolean;
  position?: number | null;
  capabilities?: { vision?: boolean | null; tools?: boolean | null; thinking?: boolean | null; contextTokens?: number | null };
  tiers?: string[] | null;
}

/** `undefined` keeps what is there; `null` clears it. */
const pick = <T>(given: T | undefined, current: T): T => (given === undefined ? current : given);

export async function setModelSettings(deps: Deps, input: ModelSettingsInput) {
  const slash = input.id.indexOf('/');
  const connectionName = slash > 0 ? input.id.slice(0, slash) : '';
  const model = input.id.slice(slash + 1);
  const row = connectionName ? await deps.store.read((tx) => findConnection(tx, connectionName)) : undefined;
  if (!row || row.kind !== 'chat' || !model) throw new ConnectionRefusal(`No chat connection offers "${input.id}": name it as <connection>/<model>, as admin/listModelSettings does.`, 404);
  await deps.store.write(function* (tx) {
    const current = (yield* listModelSettingRows(tx)).find((s) => s.connectionId === row.id && s.model === model);
    const caps = input.capabilities ?? {};
    yield* upsertModelSetting(
      tx,
      {
        connectionId: row.id,
        model,
        displayName: pick(input.name, current?.displayName ?? null),
        hidden: pick(input.hidden, current?.hidden ?? false),
        position: pick(input.position, current?.position ?? null),
        vision: pick(caps.vision, current?.vision ?? null),
        tools: pick(caps.tools, current?.tools ?? null),
        thinking: pick(caps.thinking, current?.thinking ?? null),
        contextTokens: pick(caps.contextTokens, current?.contextTokens ?? null),
        tiers: pick(input.tiers, current?.tiers ?? null),
      },
      deps.now(),
    );
  });
  deps.connections.changed();
  const entry = (await deps.connections.catalogue()).models.find((e) => e.connectionId === row.id && e.model === model)!;
  return settingView(entry);
}

export async function setDefaultModels(deps: Deps, input: Partial<Record<Purpose, string | null>>): Promise<Required<Defaults>> {
  const resolved: Partial<Record<Purpose, string | null>> = {};
  for (const purpose of PURPOSES) {
    const id = input[purpose];
    if (typeof id !== 'string') {
      resolved[purpose] = id;
      continue;
    }
    // The same check a turn makes: a model no enabled connection offers is refused now, not at the
    // next turn. Kept as its catalogue id, whichever way it was named.
    try {
      const target = await deps.connections.chat(id, purpose);
      if (!target) throw new ConnectionRefusal('No chat connection is enabled: add one before choosing defaults.');
      resolved[purpose] = target.id;
    } catch (err) {
      if (err instanceof AppError) throw new ConnectionRefusal(err.message);
      throw err;
    }
  }
  await deps.store.write(function* (tx) {
    const current = (yield* readServerSetting<Defaults>(tx, DEFAULTS_KEY)) ?? {};
    const next: Defaults = { ...current };
    for (const purpose of PURPOSES) {
      const v = resolved[purpose];
      if (v === null) delete next[purpose];
      else if (v !== undefined) next[purpose] = v;
    }
    yield* writeServerSetting(tx, DEFAULTS_KEY, next, deps.now());
  });
  deps.connections.changed();
  return (await deps.connections.catalogue()).defaults;
}
