import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError, notFound } from '../http/errors';
import type { Store } from '../db/work';
import type { AppDeps } from '../deps';
import type { User } from '../db/schema';
import { UserSchema, userWithAdminView } from '../account/account.view';
import { findUserById, listUsers } from '../account/account.store';
import { ApiKeySchema, apiKeyView } from '../auth/auth.routes';
import { createApiKey, listApiKeys, revokeApiKey } from '../auth/auth.store';
import { bonusBalanceOf, bonusBalancesOf, grantCredits } from '../credits/credit.store';
import { iso } from '../ids';
import { runDoctor } from '../ops/doctor';
import { readToolSettings, sourceEnabled } from '../tools/tool-settings';
import { codeToolSource } from '../code/code.tools';
import { AdminRefusal, changeUser, createCheckedUser } from './user-admin';
import { KEEP_BACKUPS, backupPath, createBackupOnce, listBackups } from './backups';
import { settingsReport } from './settings-report';

// The administration API: thin handlers over the stores and services `parley` (cli/) uses, for
// admins only (`users.is_admin`, set with `parley user set --admin`). docs/api.md, "Administration".

/** The shared rules refuse in words; the API answers those words with the matching status. */
async function refused<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof AdminRefusal)) throw err;
    if (err.kind === 'missing') throw notFound();
    throw new AppError(err.kind === 'conflict' ? 'CONFLICT' : 'BAD_REQUEST', { message: err.message });
  }
}

/** The user an admin names, or 404. */
async function targetUser(store: Store, userId: string): Promise<User> {
  const user = await store.read((tx) => findUserById(tx, userId));
  if (!user) throw notFound();
  return user;
}

const adminUserView = async (deps: AppDeps, u: User, now: number) => ({ ...userWithAdminView(u, now), bonusBalance: await deps.store.read((tx) => bonusBalanceOf(tx, u.id)) });

const AdminUserSchema = t.Composite([UserSchema, t.Object({ isAdmin: t.Boolean(), bonusBalance: t.Number() })]);
const BackupSchema = t.Object({ name: t.String(), bytes: t.Integer(), createdAt: t.String({ format: 'date-time' }) });
const CheckSchema = t.Object({
  name: t.String(),
  status: t.Union([t.Literal('ok'), t.Literal('warn'), t.Literal('fail'), t.Literal('skip')]),
  detail: t.String(),
  fix: t.Optional(t.String()),
});
const SettingSchema = t.Object({
  key: t.String(),
  env: t.String(),
  flag: t.Union([t.String(), t.Null()]),
  doc: t.String(),
  secret: t.Boolean(),
  value: t.String({ description: 'The value as text; a secret that is set shows as `********`, one that is not as an empty string.' }),
  source: t.Union([t.Literal('default'), t.Literal('set')], { description: '`default`, or `set` by the environment, the environment file or a flag.' }),
});
const UserId = t.String({ minLength: 1, maxLength: 100, description: "The user's id (admin/listUsers)." });
const ADMIN_ONLY = 'Admins only (`parley user set --admin`): any other caller is answered 403 (the row\'s `admin: true`, checked before the handler runs).';

export const adminOperations = [
  defineOperation({
    path: 'admin/listUsers',
    admin: true,
    summary: 'Every user, oldest first, with their admin flag and bonus credits',
    description: ADMIN_ONLY,
    input: t.Object({}),
    output: t.Object({ users: t.Array(AdminUserSchema) }),
    errors: [403],
    handler: async ({ deps }) => {
      const now = deps.now();
      const all = await deps.store.read((tx) => listUsers(tx));
      // One query for every balance: the list must not cost a query a user.
      const balances = await deps.store.read((tx) => bonusBalancesOf(tx, all.map((u) => u.id)));
      return { users: all.map((u) => ({ ...userWithAdminView(u, now), bonusBalance: balances.get(u.id) ?? 0 })) };
    },
  }),
  defineOperation({
    path: 'admin/createUser',
    admin: true,
    summary: 'Create a user (as `parley user create`)',
    description: `${ADMIN_ONLY} An e-mail address already in use answers 409. The user signs in with a login link or a sign-in provider.`,
    input: t.Object({
      email: t.String({ minLength: 3, maxLength: 320 }),
      name: t.Optional(t.String({ maxLength: 200 })),
      accountType: t.Optional(t.String({ maxLength: 40, description: 'GENERAL, STUDENT, PROFESSIONAL or DEVELOPER' })),
      isAdmin: t.Optional(t.Boolean()),
    }),
    output: t.Object({ user: AdminUserSchema }),
    errors: [403, 409],
    handler: async ({ input, deps }) => {
      const created = await refused(() => deps.store.write((tx) => createCheckedUser(tx, input, deps.now())));
      return { user: await adminUserView(deps, created, deps.now()) };
    },
  }),
  defineOperation({
    path: 'admin/updateUser',
    admin: true,
    summary: "Change a user's subscription, account type, lock, name or admin flag (as `parley user set`)",
    description: `${ADMIN_ONLY} Only the fields sent change. Removing the caller's own admin flag, or the last admin's, answers 409: a server always keeps an admin.`,
    input: t.Object({
      userId: UserId,
      name: t.Optional(t.String({ maxLength: 200 })),
      tier: t.Optional(t.String({ maxLength: 40, description: 'FREE, PLUS or PRO' })),
      active: t.Optional(t.Boolean({ description: 'Whether the subscription is active' })),
      expires: t.Optional(t.Union([t.String({ maxLength: 40 }), t.Null()], { description: 'Subscription expiry, an ISO 8601 date or date-time (UTC unless a zone is given); null for none' })),
      product: t.Optional(t.Union([t.String({ maxLength: 200 }), t.Null()], { description: 'Store product id; null for none' })),
      accountType: t.Optional(t.String({ maxLength: 40 })),
      locked: t.Optional(t.Boolean({ description: 'Whether the account type selection is locked' })),
      admin: t.Optional(t.Boolean()),
    }),
    output: t.Object({ user: AdminUserSchema }),
    errors: [403, 404, 409],
    handler: async ({ user, input, deps }) => {
      const { userId, ...change } = input;
      const updated = await refused(() => deps.store.write((tx) => changeUser(tx, userId, change, user.id, deps.now())));
      return { user: await adminUserView(deps, updated, deps.now()) };
    },
  }),
  defineOperation({
    path: 'admin/grantCredits',
    admin: true,
    summary: "Add bonus credits to a user's ledger (as `parley credits grant`)",
    description: ADMIN_ONLY,
    input: t.Object({
      userId: UserId,
      amount: t.Integer({ minimum: 1, maximum: 1_000_000_000 }),
      reason: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Kept in the ledger; default `admin_grant`' })),
    }),
    output: t.Object({ bonusBalance: t.Number() }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      const target = await targetUser(deps.store, input.userId);
      const { bonusBalance } = await deps.store.write((tx) => grantCredits(tx, { userId: target.id, amount: input.amount, reason: input.reason ?? 'admin_grant' }, deps.now()));
      return { bonusBalance };
    },
  }),
  defineOperation({
    path: 'admin/listApiKeys',
    admin: true,
    summary: "A user's API keys, newest first (never the keys themselves)",
    description: ADMIN_ONLY,
    input: t.Object({ userId: UserId }),
    output: t.Object({ keys: t.Array(ApiKeySchema) }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      const userId = (await targetUser(deps.store, input.userId)).id;
      return { keys: (await deps.store.read((tx) => listApiKeys(tx, userId))).map(apiKeyView) };
    },
  }),
  defineOperation({
    path: 'admin/createApiKey',
    admin: true,
    summary: 'Create an API key for a user',
    description: `${ADMIN_ONLY} The key is shown in this answer only; Parley keeps a hash of it.`,
    input: t.Object({ userId: UserId, name: t.String({ minLength: 1, maxLength: 100 }) }),
    output: t.Object({ keyId: t.String(), key: t.String(), name: t.String(), prefix: t.String(), createdAt: t.String({ format: 'date-time' }) }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      const userId = (await targetUser(deps.store, input.userId)).id;
      const { row, key } = await deps.store.write((tx) => createApiKey(tx, userId, input.name, deps.now()));
      return { keyId: row.id, key, name: row.name, prefix: row.prefix, createdAt: iso(row.createdAt) };
    },
  }),
  defineOperation({
    path: 'admin/revokeApiKey',
    admin: true,
    summary: "Revoke any user's API key",
    description: `${ADMIN_ONLY} An unknown key answers 404. Revoking twice succeeds.`,
    input: t.Object({ keyId: t.String({ minLength: 1, maxLength: 100 }) }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403, 404],
    handler: async ({ input, deps }) => {
      if (!(await deps.store.write((tx) => revokeApiKey(tx, input.keyId, undefined, deps.now())))) throw notFound();
      return { success: true };
    },
  }),
  defineOperation({
    path: 'admin/createBackup',
    admin: true,
    summary: "Back up the database into the data directory's `backups/`",
    description: `${ADMIN_ONLY} A consistent copy taken while the server runs (as \`parley backup\`), named \`parley-<UTC time>.db\`, with the blobs of the files it names beside it in \`parley-<UTC time>.files/\` on the server (files kept on disk; a bucket is backed up with its own tools); the newest ${KEEP_BACKUPS} are kept, older ones removed. Download the database with admin/downloadBackup.`,
    input: t.Object({}),
    output: t.Object({ backup: BackupSchema }),
    errors: [403, 409],
    handler: async ({ deps }) => {
      // On PostgreSQL the data is not in a file Parley can copy: the database's own tools back it up.
      if (!deps.db) throw new AppError('CONFLICT', { message: 'This server runs on PostgreSQL: back it up with pg_dump (docs/scaling.md, "Backups").' });
      return { backup: await createBackupOnce(deps.db.$client, deps.config.dataDir, deps.now(), deps.files.kind) };
    },
  }),
  defineOperation({
    path: 'admin/listBackups',
    admin: true,
    summary: 'The backups in the data directory, newest first',
    description: ADMIN_ONLY,
    input: t.Object({}),
    output: t.Object({ backups: t.Array(BackupSchema), keep: t.Integer({ description: 'How many backups are kept' }) }),
    errors: [403],
    handler: ({ deps }) => {
      return { backups: listBackups(deps.config.dataDir), keep: KEEP_BACKUPS };
    },
  }),
  defineOperation({
    path: 'admin/downloadBackup',
    admin: true,
    summary: 'Download a backup file',
    description: `${ADMIN_ONLY} The answer is the SQLite file itself (\`application/vnd.sqlite3\`, \`content-disposition: attachment\`), not JSON. Only a name admin/listBackups gives is accepted; any other answers 404, so no path reaches outside \`backups/\`.`,
    input: t.Object({ name: t.String({ minLength: 1, maxLength: 100 }) }),
    output: t.String({ description: 'The backup file (binary)', contentMediaType: 'application/vnd.sqlite3' }),
    errors: [403, 404],
    handler: ({ input, deps }) => {
      const file = backupPath(deps.config.dataDir, input.name);
      if (!file) throw notFound();
      const body = Bun.file(file);
      return new Response(body, {
        headers: {
          'content-type': 'application/vnd.sqlite3',
          'content-length': String(body.size),
          'content-disposition': `attachment; filename="${input.name}"`,
          'cache-control': 'no-store',
        },
      });
    },
  }),
  defineOperation({
    path: 'admin/doctor',
    admin: true,
    summary: "The `parley doctor` report: each check's state and what to fix",
    description: `${ADMIN_ONLY} The AI provider probes call the provider, so this can take a few seconds.`,
    input: t.Object({}),
    output: t.Object({ ok: t.Boolean({ description: 'No check failed' }), checks: t.Array(CheckSchema) }),
    errors: [403],
    handler: async ({ deps }) => {
      const tools = await deps.store.read(readToolSettings);
      const checks = await runDoctor({
        config: deps.config,
        dataDir: deps.config.dataDir,
        connections: deps.connections,
        embeddingsIndex: deps.embeddingsIndex.state(),
        codeInterpreterOn: sourceEnabled(tools.sources[codeToolSource.id], codeToolSource, deps.config),
      });
      return { ok: !checks.some((c) => c.status === 'fail'), checks };
    },
  }),
  defineOperation({
    path: 'admin/getSettings',
    admin: true,
    summary: "The server's settings (docs/configuration.md), secrets masked",
    description: `${ADMIN_ONLY} Read-only: settings change in the environment or the environment file, and take effect at the next start.`,
    input: t.Object({}),
    output: t.Object({ settings: t.Array(SettingSchema) }),
    errors: [403],
    handler: ({ deps }) => {
      return { settings: settingsReport(deps.config) };
    },
  }),
];
