import { t } from 'elysia';
import type { User } from '../db/schema';
import { iso, isoOrNull } from '../ids';

// The response shapes of the account domain, and the functions that turn a row into them.

export const PreferencesSchema = t.Object({ enableMemories: t.Boolean(), showMemoryToolOutput: t.Boolean() });
export const AccountTypeSchema = t.Object({ accountType: t.String(), isLocked: t.Boolean() });
export const SubscriptionSchema = t.Object({
  tier: t.String(),
  isActive: t.Boolean(),
  expiresAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  productId: t.Union([t.String(), t.Null()]),
  updatedAt: t.String({ format: 'date-time' }),
});
export const UserSchema = t.Object({
  id: t.String(),
  email: t.String(),
  name: t.String(),
  image: t.String(),
  accountType: t.String(),
  isLocked: t.Boolean(),
  subscription: SubscriptionSchema,
  preferences: PreferencesSchema,
  createdAt: t.String({ format: 'date-time' }),
  /** Bonus credits (credits/getBalance); present where the view is built with the database at hand. */
  bonusBalance: t.Optional(t.Number()),
  /** Whether the user may use the admin operations; present where the caller may need it (auth/getSession, admin/*). */
  isAdmin: t.Optional(t.Boolean()),
});

export const preferencesOf = (u: User) => ({ enableMemories: u.enableMemories, showMemoryToolOutput: u.showMemoryToolOutput });
export const accountTypeOf = (u: User) => ({ accountType: u.accountType, isLocked: u.isLocked });
/** `isActive` is what the admin set, until `expiresAt` passes: a lapsed subscription is not active. */
export const subscriptionOf = (u: User, now = Date.now()) => ({
  tier: u.subscriptionTier,
  isActive: u.subscriptionActive && (u.subscriptionExpiresAt == null || u.subscriptionExpiresAt > now),
  expiresAt: isoOrNull(u.subscriptionExpiresAt),
  productId: u.subscriptionProductId,
  updatedAt: iso(u.subscriptionUpdatedAt),
});
export const userView = (u: User, now = Date.now()) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  image: u.image,
  accountType: u.accountType,
  isLocked: u.isLocked,
  subscription: subscriptionOf(u, now),
  preferences: preferencesOf(u),
  createdAt: iso(u.createdAt),
});

/** `userView` with the admin flag: what auth/getSession and the admin operations answer. */
export const userWithAdminView = (u: User, now = Date.now()) => ({ ...userView(u, now), isAdmin: u.isAdmin });
