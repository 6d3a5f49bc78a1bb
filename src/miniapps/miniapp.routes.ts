import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import type { MiniApp } from '../db/schema';
import { listMiniApps } from './miniapp.store';

const MiniAppSchema = t.Object({
  id: t.String(),
  name: t.String(),
  url: t.String({ description: 'https (or http to localhost, for development).' }),
  iconUrl: t.Union([t.String(), t.Null()]),
  description: t.Union([t.String(), t.Null()]),
});

export const miniAppView = (a: MiniApp) => ({ id: a.id, name: a.name, url: a.url, iconUrl: a.iconUrl, description: a.description });

export const miniAppOperations = [
  defineOperation({
    path: 'miniApps/list',
    summary: 'The mini apps this server offers, in the order its admin chose',
    description: 'Added and arranged by an admin (`parley miniapps add`, `set --position`); the same list for every user.',
    input: t.Object({}),
    output: t.Object({ apps: t.Array(MiniAppSchema) }),
    handler: async ({ deps }) => ({ apps: (await deps.store.read((tx) => listMiniApps(tx))).map(miniAppView) }),
  }),
];
