import { and, eq, asc, ne, sql } from 'drizzle-orm';
import type { Db } from '../db/connection';
import { preparedFor } from '../db/prepared';
import { forgetCredentials } from '../auth/credential-cache';
import { users, type User } from '../db/schema';
import { newId } from '../ids';

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

export function createUser(db: Db, input: NewUser, now = Date.now()): User {
  const [row] = db
    .insert(users)
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
    .returning()
    .all();
  return row!;
}

// On every request (authentication), hence prepared once.
const userById = preparedFor((db) => db.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare());

export const findUserById = (db: Db, id: string): User | undefined => userById(db).get({ id });

export const findUserByEmail = (db: Db, email: string): User | undefined =>
  db.select().from(users).where(eq(users.email, normaliseEmail(email))).get();

export const listUsers = (db: Db): User[] => db.select().from(users).orderBy(asc(users.createdAt)).all();

export const countUsers = (db: Db): number => db.select({ n: sql<number>`count(*)` }).from(users).get()!.n;

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

/** Apply a patch; touching any subscription field also moves `subscriptionUpdatedAt`. */
export function updateUser(db: Db, id: string, patch: UserPatch, now = Date.now()): User | undefined {
  const touchesSubscription = SUBSCRIPTION_FIELDS.some((f) => patch[f] !== undefined);
  // Authenticated requests carry a cached copy of the user row.
  forgetCredentials(id);
  return db
    .update(users)
    .set({ ...patch, updatedAt: now, ...(touchesSubscription ? { subscriptionUpdatedAt: now } : {}) })
    .where(eq(users.id, id))
    .returning()
    .get();
}

/** How many admins there are besides `userId` (the last admin must stay one: src/admin/user-admin.ts). */
export const countAdminsExcept = (db: Db, userId: string): number =>
  db.select({ n: sql<number>`count(*)` }).from(users).where(and(eq(users.isAdmin, true), ne(users.id, userId))).get()!.n;
