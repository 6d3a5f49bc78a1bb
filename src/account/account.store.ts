import { and, eq, asc, ne, sql } from 'drizzle-orm';
import { preparedFor } from '../db/prepared';
import { forgetCredentials } from '../auth/credential-cache';
import { users, type User } from '../db/schema';
import { afterCommit, allRows, getRow, hotOr, serializeOn, type Tx, type Work } from '../db/work';
import { newId } from '../ids';

// Units of work (src/db/work.ts), run by `deps.store` on SQLite or PostgreSQL alike.

export const ACCOUNT_TYPES = ['GENERAL', 'STUDENT', 'PROFESSIONAL', 'DEVELOPER'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];
export const SUBSCRIPTION_TIERS = ['FREE', 'PLUS', 'PRO'] as const;

export const normaliseEmail = (email: string) => email.trim().toLowerCase();

export interface NewUser {
  email: string;
  name?: string;
  image?: string;
  accountType?: AccountType;
}

export function* createUser({ db, t }: Tx, input: NewUser, now: number): Work<User> {
  return (yield* getRow(
    db
      .insert(t.users)
      .values({
        id: newId(),
        email: normaliseEmail(input.email),
        name: input.name ?? '',
        image: input.image ?? '',
        accountType: input.accountType ?? 'GENERAL',
        subscriptionUpdatedAt: now,
        createdAt: now,
        updatedAt: now,
      })
      .returning(),
  ))!;
}

// On every request that misses the credential cache (authentication), hence prepared once on SQLite.
const userById = preparedFor((db) => db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare());

/** Per request (authentication). */
export function* findUserById(tx: Tx, id: string): Work<User | undefined> {
  return yield* hotOr(
    tx,
    (db) => userById(db).get({ id }),
    () => getRow(tx.db.select().from(tx.t.users).where(eq(tx.t.users.id, id))),
  );
}

export function* findUser({ db, t }: Tx, id: string): Work<User | undefined> {
  return yield* getRow(db.select().from(t.users).where(eq(t.users.id, id)));
}

export function* findUserByEmail({ db, t }: Tx, email: string): Work<User | undefined> {
  return yield* getRow(db.select().from(t.users).where(eq(t.users.email, normaliseEmail(email))));
}

export function* listUsers({ db, t }: Tx): Work<User[]> {
  return yield* allRows(db.select().from(t.users).orderBy(asc(t.users.createdAt)));
}

/** Whether the server has an admin (the first-run setup stays open until it does: src/setup/). */
export function* hasAdmin({ db, t }: Tx): Work<boolean> {
  return (yield* getRow(db.select({ id: t.users.id }).from(t.users).where(eq(t.users.isAdmin, true)).limit(1))) !== undefined;
}

export function* countUsers({ db, t }: Tx): Work<number> {
  return (yield* getRow(db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(t.users)))!.n;
}

export type UserPatch = Partial<
  Pick<
    User,
    | 'name'
    | 'image'
    | 'accountType'
    | 'isLocked'
    | 'subscriptionTier'
    | 'subscriptionActive'
    | 'subscriptionExpiresAt'
    | 'subscriptionProductId'
    | 'enableMemories'
    | 'showMemoryToolOutput'
    | 'isAdmin'
  >
>;

const SUBSCRIPTION_FIELDS = ['subscriptionTier', 'subscriptionActive', 'subscriptionExpiresAt', 'subscriptionProductId'] as const;

/**
 * Apply a patch; touching any subscription field also moves `subscriptionUpdatedAt`. Authenticated
 * requests carry a cached copy of the user row: the cache forgets it once the change committed.
 */
export function* updateUser({ db, t }: Tx, id: string, patch: UserPatch, now: number): Work<User | undefined> {
  const touchesSubscription = SUBSCRIPTION_FIELDS.some((f) => patch[f] !== undefined);
  const row = yield* getRow(
    db
      .update(t.users)
      .set({ ...patch, updatedAt: now, ...(touchesSubscription ? { subscriptionUpdatedAt: now } : {}) })
      .where(eq(t.users.id, id))
      .returning(),
  );
  yield* afterCommit(() => forgetCredentials(id));
  return row;
}

/**
 * How many admins there are besides `userId` (the last admin must stay one: src/admin/user-admin.ts).
 * Transactions that count admins queue one behind the other first (`serializeOn`), so on
 * PostgreSQL two removing two admins at once cannot both see the other still there; under
 * SQLite's one writer this changes nothing. (Locking the admins' rows instead deadlocked: each
 * transaction met them in another order.)
 */
export function* countAdminsExcept(tx: Tx, userId: string): Work<number> {
  const { db, t } = tx;
  yield* serializeOn(tx, 'parley:admins');
  return (yield* getRow(db.select({ n: sql<number>`count(*)`.mapWith(Number) }).from(t.users).where(and(eq(t.users.isAdmin, true), ne(t.users.id, userId)))))!.n;
}
