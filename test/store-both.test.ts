/**
 * One store interface for two databases (src/db/work.ts): the same units of work run on SQLite
 * (`sqliteStore`) and on a real PostgreSQL (`pgStore`) and give the same results: the bookmarks
 * domain, which runs on it, plus what every domain will need (transactions that roll back whole,
 * a failed query caught inside the work, JSON, booleans and 64-bit milliseconds).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SQL } from 'bun';
import { eq } from 'drizzle-orm';
import { openDatabase } from '../src/db/connection';
import { migrate } from '../src/db/migrate';
import { sqliteStore } from '../src/db/store';
import { pgStore } from '../src/db/pg/store';
import { migratePg } from '../src/db/pg/migrate';
import { afterCommit, allRows, exec, getRow, type Store, type Tx, type Work } from '../src/db/work';
import {
  addBookmarkItem,
  createBookmarkGroup,
  deleteBookmarkGroup,
  findBookmarkItemWithOwner,
  listBookmarkGroups,
  listBookmarkItemsOfUser,
  removeBookmarkItem,
} from '../src/bookmarks/bookmark.store';
import { createLoginLink, peekLoginLink, pruneLoginLinks, redeemLoginLink } from '../src/auth/login-link.store';
import { createWidget, findWidgetById } from '../src/widgets/widget.store';
import { addThreadMessage, archiveThread, getOrCreateActiveThread, listThreadPage, findThreadById } from '../src/widgets/widget-thread.store';
import { bonusBalanceOf, bonusBalancesOf, grantCredits, listLedger, spendCredits } from '../src/credits/credit.store';
import { searchHistory } from '../src/chat/history.store';
import { findLease, releaseLease, tryAcquireLease } from '../src/tasks/lease.store';
import {
  createApiKey,
  createSession,
  findApiKeyByHash,
  findApiKeyById,
  findSessionByHash,
  findSessionById,
  listActiveSessions,
  listApiKeys,
  pruneEndedSessions,
  revokeApiKey,
  revokeSession,
  touchApiKey,
  touchSession,
} from '../src/auth/auth.store';
import { authenticate, credentialStillValid } from '../src/auth/authenticate';
import { forgetAllCredentials, forgetCredentials } from '../src/auth/credential-cache';
import { hashSecret } from '../src/auth/tokens';
import { DAY_MS } from '../src/time';
import { claimPushToken, deliverableTokens } from '../src/notifications/push-token-holder';
import { listPushTokens, removePushTokens } from '../src/notifications/push-token.store';
import { countUsers, findUserByEmail, findUserById, listUsers, updateUser } from '../src/account/account.store';
import { changeUser, createCheckedUser } from '../src/admin/user-admin';
import { createGroupChat, createGroupInvite, findGroupById, findGroupByInvite, lockGroupForUser } from '../src/groups/group.store';
import { deleteGroup, joinGroup, leaveGroup, sendGroupMessage } from '../src/groups/group.service';
import { listGroupEventsAfter } from '../src/groups/group-events.store';
import { groupTopic, type GroupEvent } from '../src/groups/group-events';
import { createMemoryBus } from '../src/pubsub/bus';
import type { AppDeps } from '../src/deps';
import type { User } from '../src/db/schema';
import { postgresAvailable, startPostgres, type TestPostgres } from './support/postgres';

const run = postgresAvailable();
const NOW = 1_764_000_000_123; // past 2^32 ms, as every timestamp is

function* addUser({ db, t }: Tx, id: string): Work<void> {
  yield* exec(db.insert(t.users).values({ id, email: `${id}@example.org`, isLocked: true, subscriptionUpdatedAt: NOW, createdAt: NOW, updatedAt: NOW }));
}
function* addConversation({ db, t }: Tx, id: string, ownerId: string): Work<void> {
  yield* exec(db.insert(t.conversations).values({ id, ownerId, title: 'Grüße 🙂', createdAt: NOW, updatedAt: NOW }));
}

/** The same story on one store; ids are replaced by their order of appearance, so both stores compare. */
async function story(store: Store) {
  await store.write(function* (tx) {
    yield* addUser(tx, 'ann');
    yield* addConversation(tx, 'c1', 'ann');
  });
  const g1 = await store.write((tx) => createBookmarkGroup(tx, 'ann', 'Reading', NOW));
  const g2 = await store.write((tx) => createBookmarkGroup(tx, 'ann', 'Later', NOW + 1));
  const item = await store.write((tx) => addBookmarkItem(tx, { groupId: g1.id, conversationId: 'c1' }, NOW + 2));
  await store.write((tx) => addBookmarkItem(tx, { groupId: g2.id, conversationId: 'c1' }, NOW + 3));
  const owner = await store.read((tx) => findBookmarkItemWithOwner(tx, item.id));
  const [groups, items] = await store.read(function* (tx) {
    return [yield* listBookmarkGroups(tx, 'ann'), yield* listBookmarkItemsOfUser(tx, 'ann')] as const;
  });
  const removed = [await store.read((tx) => removeBookmarkItem(tx, item.id)), await store.read((tx) => removeBookmarkItem(tx, item.id))];
  const deleted = await store.write((tx) => deleteBookmarkGroup(tx, g2.id));
  const left = await store.read((tx) => listBookmarkGroups(tx, 'ann'));

  // A write that fails half-way leaves nothing behind.
  const failed = await store
    .write(function* (tx) {
      yield* createBookmarkGroup(tx, 'ann', 'Doomed', NOW);
      throw new Error('changed my mind');
    })
    .catch((e: Error) => e.message);
  // A failing query is thrown into the work at its `yield`, which may catch it and go on. (Outside
  // a transaction: inside one, PostgreSQL aborts the transaction on any error, see src/db/work.ts.)
  const caught = await store.read(function* (tx) {
    try {
      yield* addBookmarkItem(tx, { groupId: 'no-such-group', conversationId: 'c1' }, NOW);
      return 'written';
    } catch {
      return 'refused';
    }
  });
  const user = await store.read(function* ({ db, t }) {
    return yield* getRow(db.select({ isLocked: t.users.isLocked, isAdmin: t.users.isAdmin, createdAt: t.users.createdAt }).from(t.users).where(eq(t.users.id, 'ann')));
  });
  const widget = await store.read(function* ({ db, t }) {
    yield* exec(db.insert(t.widgets).values({ id: 'w1', conversationId: 'c1', responseId: 'r1', widgetType: 'canvas', document: { topic: 'Äpfel', nested: { n: [1, 2.5, null] }, ok: true }, createdAt: NOW, updatedAt: NOW }));
    return yield* getRow(db.select({ document: t.widgets.document }).from(t.widgets).where(eq(t.widgets.id, 'w1')));
  });
  const titles = await store.read(function* ({ db, t }) {
    return (yield* allRows(db.select({ title: t.conversations.title }).from(t.conversations))).map((r) => r.title);
  });

  const ids = new Map<string, string>();
  const anon = (v: unknown): unknown =>
    typeof v === 'string' && /^[0-9a-f]{8}-/.test(v) ? (ids.get(v) ?? (ids.set(v, `id${ids.size}`), `id${ids.size - 1}`)) : Array.isArray(v) ? v.map(anon) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, anon(x)])) : v;
  return anon({ g1, g2, item, owner, groups, items, removed, deleted, left, failed, caught, user, widget, titles });
}

/** Login links: made, looked at, used once (a second use loses), expired, pruned. */
async function loginLinkStory(store: Store) {
  await store.write((tx) => addUser(tx, 'bob'));
  const made = await store.write((tx) => createLoginLink(tx, 'bob', 60_000, NOW));
  const late = await store.write((tx) => createLoginLink(tx, 'bob', 1_000, NOW));
  const peeked = (await store.read((tx) => peekLoginLink(tx, made.token, NOW + 1))).ok;
  const uses = await Promise.all([store.write((tx) => redeemLoginLink(tx, made.token, NOW + 2)), store.write((tx) => redeemLoginLink(tx, made.token, NOW + 2))]);
  const expired = await store.write((tx) => redeemLoginLink(tx, late.token, NOW + 5_000));
  const unknown = await store.read((tx) => peekLoginLink(tx, 'pl_nothing', NOW));
  const pruned = await store.read((tx) => pruneLoginLinks(tx, NOW + 10_000));
  return { peeked, uses: uses.map((u) => (u.ok ? 'won' : u.reason)).sort(), expired, unknown, pruned };
}

/** Widgets and their threads: made once per origin, one active thread under a race, gap-free message numbers under concurrent appends. */
async function widgetStory(store: Store) {
  await store.write(function* (tx) {
    yield* addUser(tx, 'cy');
    yield* addConversation(tx, 'c-cy', 'cy');
  });
  const input = { conversationId: 'c-cy', responseId: 'r1', widgetType: 'canvas', title: 'Plan', document: { topic: 'Plan', content: '# Plan' }, origin: 'r1:call_1' };
  const [w1, w2] = await Promise.all([store.read((tx) => createWidget(tx, input, NOW)), store.read((tx) => createWidget(tx, input, NOW + 1))]);
  const threads = await Promise.all(Array.from({ length: 5 }, () => store.write((tx) => getOrCreateActiveThread(tx, w1.id, 'cy', NOW, 10))));
  const thread = threads[0]!.thread;
  const caps = { threadMaxMessages: 20, threadMaxBytes: 1_000_000, userMaxMessages: 1000, userMaxBytes: 1_000_000, userMaxThreads: 10 };
  // Two more than the thread takes, all at once: exactly 20 land, numbered without a gap, and counted.
  const added = await Promise.allSettled(Array.from({ length: 22 }, (_, i) => store.write((tx) => addThreadMessage(tx, thread, { n: i }, JSON.stringify({ n: i }).length, caps, NOW + i))));
  const { messages } = await store.read((tx) => listThreadPage(tx, thread.id, { limit: 100, maxBytes: 1_000_000 }));
  const counted = await store.read((tx) => findThreadById(tx, thread.id));
  const archived = [await store.read((tx) => archiveThread(tx, thread.id, NOW)), await store.read((tx) => archiveThread(tx, thread.id, NOW))];
  const next = await store.write((tx) => getOrCreateActiveThread(tx, w1.id, 'cy', NOW, 10));
  return {
    sameWidget: w1.id === w2.id,
    document: (await store.read((tx) => findWidgetById(tx, w1.id)))!.document,
    threadIds: new Set(threads.map((r) => r.thread.id)).size,
    created: threads.filter((r) => r.created).length,
    seqs: messages.map((m) => m.seq),
    refused: added.filter((r) => r.status === 'rejected').map((r) => (r.reason as { data?: unknown }).data),
    counted: { messages: counted!.messageCount, bytes: counted!.bytes === messages.reduce((n, m) => n + m.bytes, 0) && counted!.bytes > 0 },
    archived,
    fresh: next.created && next.thread.id !== thread.id,
  };
}

/** Credits: an ad grants once under a race; concurrent spends never take the balance below zero. */
async function creditStory(store: Store) {
  await store.write((tx) => addUser(tx, 'dee'));
  const adGrants = await Promise.all(Array.from({ length: 5 }, () => store.write((tx) => grantCredits(tx, { userId: 'dee', amount: 10, reason: 'ad', adId: 'ad-1' }, NOW))));
  const spends = await Promise.all(Array.from({ length: 15 }, (_, i) => store.write((tx) => spendCredits(tx, { userId: 'dee', amount: 1, reason: 'chat' }, NOW + i))));
  return {
    granted: adGrants.filter((g) => g.granted).length,
    spent: spends.filter((s) => s.spent).length,
    balance: await store.read((tx) => bonusBalanceOf(tx, 'dee')),
    balances: [...(await store.read((tx) => bonusBalancesOf(tx, ['dee', 'nobody'])))],
    ledger: (await store.read((tx) => listLedger(tx, 'dee'))).length,
  };
}

/** History search, written once per database: the caller's own searchable messages, any word, nothing parsed as syntax. */
async function historyStory(store: Store) {
  await store.write(function* (tx) {
    const { db, t } = tx;
    yield* addUser(tx, 'eve');
    yield* addUser(tx, 'fay');
    yield* addConversation(tx, 'h1', 'eve');
    yield* addConversation(tx, 'h2', 'eve');
    yield* addConversation(tx, 'h3', 'fay');
    const items: [string, string, string, boolean][] = [
      ['i1', 'h1', 'The octopus has three hearts', true],
      ['i2', 'h1', 'Octopuses are clever', true],
      ['i3', 'h2', 'A THREE-day trip to Lisbon', true],
      ['i4', 'h2', 'group chatter about hearts', false],
      ['i5', 'h3', 'three hearts, but Fay wrote it', true],
    ];
    for (const [id, conversationId, content, searchable] of items)
      yield* exec(db.insert(t.conversationItems).values({ id, conversationId, position: Number(id.slice(1)), role: 'user', content, searchable, createdAt: NOW }));
  });
  const find = async (query: string, exclude?: string) =>
    (await store.read((tx) => searchHistory(tx, { userId: 'eve', query, excludeConversationId: exclude }))).map((h) => `${h.conversationId}:${h.text}`).sort();
  return {
    three: await find('three'),
    hearts: await find('HEARTS'),
    either: await find('lisbon clever'),
    excluded: await find('three', 'h1'),
    syntax: await find('"; DROP TABLE users; -- * OR NEAR('),
    nothing: await find('   '),
  };
}

/** Leases: one winner among racing instances, renewed by its holder, taken over once expired, given up. */
async function leaseStory(store: Store) {
  const take = (holder: string, at: number, ttl = 1_000) => store.write((tx) => tryAcquireLease(tx, 'retention', holder, ttl, at));
  const race = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((h) => take(h, NOW)));
  const winner = race.find((l) => l)!.holder;
  const other = ['a', 'b', 'c', 'd', 'e'].find((h) => h !== winner)!;
  const renewed = await take(winner, NOW + 500);
  const refused = await take(other, NOW + 1_200); // before the renewed expiry (NOW + 1500)
  const takenOver = await take(other, NOW + 1_500);
  await store.write((tx) => releaseLease(tx, 'retention', winner)); // not the holder any more: nothing happens
  const stillOther = (await store.read((tx) => findLease(tx, 'retention')))!.holder === other;
  await store.write((tx) => releaseLease(tx, 'retention', other));
  const free = (await store.read((tx) => findLease(tx, 'retention'))) === undefined;
  const afterRelease = await take(winner, NOW + 1_600);
  return {
    winners: race.filter((l) => l).length,
    renewed: renewed && { holder: renewed.holder === winner, acquiredAt: renewed.acquiredAt, expiresAt: renewed.expiresAt },
    refused,
    takenOver: takenOver && { holder: takenOver.holder === other, acquiredAt: takenOver.acquiredAt },
    stillOther,
    free,
    afterRelease: afterRelease?.holder === winner,
  };
}

/** After-commit steps: run once the transaction committed, in order, never for a rolled-back one. */
async function afterCommitStory(store: Store) {
  const log: string[] = [];
  const written = await store.write(function* (tx) {
    yield* addUser(tx, 'gil');
    yield* afterCommit(() => log.push('first'));
    yield* afterCommit(() => log.push('second'));
    log.push('work done');
    return 'ok';
  });
  log.push(`write resolved: ${written}`);
  const failed = await store
    .write(function* (tx) {
      yield* addUser(tx, 'hal');
      yield* afterCommit(() => log.push('never'));
      throw new Error('rolled back');
    })
    .catch((e: Error) => e.message);
  const hal = await store.read(function* ({ db, t }) {
    return yield* getRow(db.select().from(t.users).where(eq(t.users.id, 'hal')));
  });
  await store.read(function* () {
    yield* afterCommit(() => log.push('after a read'));
  });
  return { log, failed, hal: hal ?? null };
}

/** Sessions, API keys and the push tokens they hold: a token stays with a live holder, moves once it ended. */
async function credentialStory(store: Store) {
  await store.write(function* (tx) {
    yield* addUser(tx, 'ivy');
    yield* addUser(tx, 'jon');
  });
  const ivyPhone = await store.write((tx) => createSession(tx, 'ivy', 60_000, { userAgent: 'phone' }, NOW));
  const jonLaptop = await store.write((tx) => createSession(tx, 'jon', 60_000, {}, NOW));
  const jonKey = await store.write((tx) => createApiKey(tx, 'jon', 'script', NOW));
  const token = 'ExponentPushToken[shared-tablet]';
  const first = await store.write((tx) => claimPushToken(tx, 'ivy', { kind: 'session', sessionId: ivyPhone.row.id }, token, 'ios', NOW, 20));
  const whileLive = await store.write((tx) => claimPushToken(tx, 'jon', { kind: 'session', sessionId: jonLaptop.row.id }, token, 'ios', NOW + 1, 20));
  const revoked = [await store.write((tx) => revokeSession(tx, ivyPhone.row.id, NOW + 2)), await store.write((tx) => revokeSession(tx, ivyPhone.row.id, NOW + 3))];
  const afterSignOut = await store.write((tx) => claimPushToken(tx, 'jon', { kind: 'apiKey', keyId: jonKey.row.id }, token, 'ios', NOW + 4, 20));
  const deliverable = await store.read((tx) => deliverableTokens(tx, 'jon', NOW + 5));
  const keyRevoked = (await store.write((tx) => revokeApiKey(tx, jonKey.row.id, 'ivy', NOW + 6))) ?? null; // not ivy's key
  await store.write((tx) => revokeApiKey(tx, jonKey.row.id, 'jon', NOW + 6));
  const deliverableAfter = await store.read((tx) => deliverableTokens(tx, 'jon', NOW + 7));
  const active = (await store.read((tx) => listActiveSessions(tx, 'jon', NOW + 8))).map((x) => x.id === jonLaptop.row.id);
  const keys = (await store.read((tx) => listApiKeys(tx, 'jon'))).map((k) => k.revokedAt);
  const pruned = await store.read((tx) => pruneEndedSessions(tx, NOW + 100_000)); // both sessions ended by then (expired or revoked)
  const gone = (await store.read((tx) => findSessionById(tx, jonLaptop.row.id))) ?? null;
  const removed = await store.read((tx) => removePushTokens(tx, [token, 'not-there']));
  return { first, whileLive, revoked, afterSignOut, deliverable, keyRevoked, deliverableAfter, active, keys, pruned, gone, removed, left: await store.read((tx) => listPushTokens(tx, 'jon')) };
}

/**
 * Accounts: e-mail addresses are unique whatever their case; two admins removing each other at
 * once leave one (ten such pairs at once, so the transactions overlap on PostgreSQL). The rule
 * counts admins across the whole table, so the pairs share one group of admins: every demotion
 * but one must be refused, whatever the order.
 */
/**
 * Authentication: keys and sessions found by hash, stamped when used, revoked; the credential
 * cache answering for the database, and forgetting when told (in this process, or by the cluster
 * bus), even while a lookup is on its way.
 */
async function authStory(store: Store) {
  // The same store, except that a read can be held once done, before its caller sees the rows:
  // what a slow PostgreSQL round trip does, made certain.
  let hold: { reached: () => void; until: Promise<void> } | undefined;
  const holdNextRead = () => {
    const reached = Promise.withResolvers<void>();
    const until = Promise.withResolvers<void>();
    hold = { reached: reached.resolve, until: until.promise };
    return { reached: reached.promise, release: until.resolve };
  };
  const auth: Store = {
    ...store,
    async read(work) {
      const rows = await store.read(work);
      const h = hold;
      hold = undefined;
      if (h) {
        h.reached();
        await h.until;
      }
      return rows;
    },
  };
  await store.write((tx) => addUser(tx, 'kit'));
  const { row: keyRow, key } = await store.write((tx) => createApiKey(tx, 'kit', 'laptop', NOW));
  const { row: sessionRow, token } = await store.write((tx) => createSession(tx, 'kit', 600_000, {}, NOW));
  const found = await store.read(function* (tx) {
    return {
      key: (yield* findApiKeyByHash(tx, hashSecret(key)))?.id === keyRow.id,
      session: (yield* findSessionByHash(tx, hashSecret(token)))?.id === sessionRow.id,
      unknownKey: (yield* findApiKeyByHash(tx, hashSecret('pk_nothing'))) ?? null,
      unknownSession: (yield* findSessionByHash(tx, hashSecret(key))) ?? null,
      user: (yield* findUserById(tx, 'kit'))?.email,
      unknownUser: (yield* findUserById(tx, 'nobody')) ?? null,
    };
  });
  const stamps = async () => {
    const [k, s] = await store.read(function* (tx) {
      return [yield* findApiKeyById(tx, keyRow.id), yield* findSessionById(tx, sessionRow.id)] as const;
    });
    return { key: k!.lastUsedAt, session: s!.lastUsedAt, expires: s!.expiresAt };
  };
  await store.read((tx) => touchApiKey(tx, keyRow.id, NOW + 1));
  await store.read((tx) => touchSession(tx, sessionRow.id, 600_000, NOW + 2));
  const touched = await stamps();

  const byKey = new Headers({ 'x-api-key': key });
  const bySession = new Headers({ authorization: `Bearer ${token}` });
  const who = async (headers: Headers, at: number) => (await authenticate(auth, headers, 1, at))?.principal.user.name ?? null;
  const rename = (name: string) =>
    store.read(function* ({ db, t }) {
      yield* exec(db.update(t.users).set({ name }).where(eq(t.users.id, 'kit')));
    });
  const names: unknown[] = [await who(byKey, NOW + 3), await who(bySession, NOW + 3)];
  await rename('Kit'); // behind the cache's back: it answers as before
  names.push(await who(byKey, NOW + 4), await who(bySession, NOW + 4));
  forgetCredentials('kit');
  names.push(await who(byKey, NOW + 5));
  await rename('Kit C.');
  forgetAllCredentials(auth);
  names.push(await who(bySession, NOW + 6));
  // A change told between a lookup's read and its answer leaves no stale entry behind.
  forgetCredentials('kit');
  let held = holdNextRead();
  const inFlight = who(byKey, NOW + 7);
  await held.reached;
  await rename('K.');
  forgetCredentials('kit');
  held.release();
  names.push(await inFlight, await who(byKey, NOW + 8));
  held = holdNextRead();
  const inFlightAll = who(bySession, NOW + 9);
  await held.reached;
  await rename('Kay');
  forgetAllCredentials(auth);
  held.release();
  names.push(await inFlightAll, await who(bySession, NOW + 10));
  // Used a minute and more later: the key's stamp moves, the session slides a TTL (1 day) ahead.
  await who(byKey, NOW + 70_000);
  await who(bySession, NOW + 70_000);
  const used = await stamps();

  const ref = (await authenticate(auth, byKey, 1, NOW + 70_001))!.ref;
  const validBefore = await credentialStillValid(auth, ref, 'kit', NOW + 70_002);
  const otherUser = await credentialStillValid(auth, ref, 'nobody', NOW + 70_002);
  await store.write((tx) => revokeApiKey(tx, keyRow.id, 'kit', NOW + 70_003));
  const revokedKey = { key: await who(byKey, NOW + 70_004), valid: await credentialStillValid(auth, ref, 'kit', NOW + 70_004), session: await who(bySession, NOW + 70_004) };
  await store.write((tx) => revokeSession(tx, sessionRow.id, NOW + 70_005));
  const revokedSession = await who(bySession, NOW + 70_006);
  return { found, touched, names, used, validBefore, otherUser, revokedKey, revokedSession };
}

async function accountStory(store: Store) {
  const before = await store.read((tx) => countUsers(tx));
  const kim = await store.write((tx) => createCheckedUser(tx, { email: 'Kim@Example.org', isAdmin: true }, NOW));
  const lou = await store.write((tx) => createCheckedUser(tx, { email: 'lou@example.org', isAdmin: true, accountType: 'student' }, NOW));
  const duplicate = await store.write((tx) => createCheckedUser(tx, { email: 'KIM@example.org' }, NOW)).catch((e: Error) => e.message);
  const found = (await store.read((tx) => findUserByEmail(tx, ' kim@EXAMPLE.org ')))?.id === kim.id;
  const admins = [kim, lou];
  for (let i = 0; i < 8; i++) admins.push(await store.write((tx) => createCheckedUser(tx, { email: `admin${i}@example.org`, isAdmin: true }, NOW)));
  // Each admin removes the next one's flag, all at once: only one admin may be left.
  const demotions = await Promise.allSettled(admins.map((actor, i) => store.write((tx) => changeUser(tx, admins[(i + 1) % admins.length]!.id, { admin: false }, actor.id, NOW + 1))));
  const left = (await store.read((tx) => listUsers(tx))).filter((u) => u.isAdmin).length;
  const patched = await store.write((tx) => updateUser(tx, lou.id, { subscriptionTier: 'PRO' }, NOW + 2));
  const refusals = demotions.filter((d) => d.status === 'rejected').map((d) => ((d as PromiseRejectedResult).reason as Error).message);
  return {
    added: (await store.read((tx) => countUsers(tx))) - before,
    accountType: lou.accountType,
    duplicate,
    found,
    done: demotions.length - refusals.length,
    refusals: [...new Set(refusals)],
    left,
    subscriptionUpdatedAt: patched?.subscriptionUpdatedAt,
  };
}

/**
 * Group chats through their service: joins at once, then every member sending at once through the
 * queued write (on PostgreSQL, concurrent transactions on the pool): event numbers without gaps
 * and published in order, positions unique; a non-member refused; leaving, deleting.
 */
async function groupStory(store: Store) {
  const bus = createMemoryBus();
  const deps = { store, bus, now: () => NOW, config: { sseRetryMs: 1_000 } } as unknown as AppDeps;
  const names = ['gia', 'gus', 'gwen', 'gabe', 'gert'];
  await store.write(function* (tx) {
    for (const id of names) yield* addUser(tx, id);
    yield* addUser(tx, 'gray');
  });
  const [gia, ...others] = names.map((id) => ({ id, name: id, image: '' }) as User);
  const group = await store.write((tx) => createGroupChat(tx, { name: 'Trip', creatorId: gia!.id }, NOW));
  const published: number[] = [];
  bus.subscribe<GroupEvent>(groupTopic(group.id), (e) => void published.push(e.seq!));
  const { code } = await store.write((tx) => createGroupInvite(tx, { groupId: group.id, createdBy: gia!.id, ttlMs: 60_000 }, NOW));
  const invited = (await store.read((tx) => findGroupByInvite(tx, code, NOW)))!;
  const joins = await Promise.all([...others, others[0]!].map((u) => joinGroup(deps, invited, u)));
  const member = (userId: string) =>
    function* (tx: Tx) {
      const found = yield* lockGroupForUser(tx, group.id, userId);
      if (!found?.isMember) throw new Error('not a member');
      return found.group;
    };
  const send = (u: User, text: string) => sendGroupMessage(deps, member(u.id), u, text);
  const everyone = [gia!, ...others];
  const sent = await Promise.all(everyone.flatMap((u) => Array.from({ length: 8 }, (_, i) => send(u, `${u.id} ${i}`))));
  const stranger = await send({ id: 'gray', name: '', image: '' } as User, 'let me in').catch((e: Error) => e.message);
  const left = [await leaveGroup(deps, group, others[0]!), await leaveGroup(deps, group, others[0]!)];
  const afterLeaving = await send(others[0]!, 'still here?').catch((e: Error) => e.message);
  const stored = await store.read((tx) => listGroupEventsAfter(tx, group.id, 0));
  const positions = await store.read(function* ({ db, t }) {
    return (yield* allRows(db.select({ position: t.conversationItems.position }).from(t.conversationItems).where(eq(t.conversationItems.conversationId, group.conversationId)))).map(
      (r) => r.position,
    );
  });
  const lastSeq = (await store.read((tx) => findGroupById(tx, group.id)))!.lastSeq;
  const deleted = [await deleteGroup(deps, group), await deleteGroup(deps, group)];
  const gone = (await store.read((tx) => findGroupById(tx, group.id))) ?? null;
  const eventsLeft = (await store.read((tx) => listGroupEventsAfter(tx, group.id, 0))).length;
  return {
    joins: joins.map((g) => g?.id === group.id),
    sent: sent.length,
    contents: new Set(sent.map((s) => s.message.content)).size,
    stranger,
    left,
    afterLeaving,
    types: [...new Set(stored.map((e) => e.type))],
    seqs: stored.map((e) => e.seq),
    lastSeq,
    published,
    positions: [...positions].sort((a, b) => a - b),
    deleted,
    gone,
    eventsLeft,
  };
}

describe.if(run)('one store interface, two databases', () => {
  let pg: TestPostgres;
  let sql: SQL;
  beforeAll(async () => {
    pg = await startPostgres();
    sql = new SQL({ url: pg.url, max: 4 });
    await migratePg(sql);
  }, 60_000);
  afterAll(async () => {
    await sql?.close();
    await pg?.stop();
  }, 60_000);
  /** The story on a fresh migrated SQLite database, then on the PostgreSQL one: both must give `expected`. */
  async function onBoth<T>(story: (store: Store) => Promise<T>, expected: Awaited<T>) {
    const lite = openDatabase(':memory:');
    migrate(lite.$client);
    try {
      expect(await story(sqliteStore(lite))).toEqual(expected);
      expect(await story(pgStore(sql))).toEqual(expected);
    } finally {
      lite.$client.close();
    }
  }

  test('the bookmarks domain and the basics give the same results on SQLite and on PostgreSQL', async () => {
    const lite = openDatabase(':memory:');
    migrate(lite.$client);
    const onSqlite = await story(sqliteStore(lite));
    const onPg = await story(pgStore(sql));
    expect(onPg).toEqual(onSqlite);
    // And what they are, so a store that is wrong on both does not pass.
    expect(onSqlite).toMatchObject({
      removed: [true, false],
      deleted: { deletedItems: 1 },
      failed: 'changed my mind',
      caught: 'refused',
      user: { isLocked: true, isAdmin: false, createdAt: NOW },
      widget: { document: { topic: 'Äpfel', nested: { n: [1, 2.5, null] }, ok: true } },
      titles: ['Grüße 🙂'],
    });
    expect((onSqlite as { left: unknown[] }).left).toHaveLength(1);
    expect((onSqlite as { items: unknown[] }).items).toHaveLength(2);
    lite.$client.close();
  }, 60_000);

  test('widgets behave the same on both: one per origin, one active thread, message numbers without gaps under concurrent appends, the thread cap exact under them', async () => {
    const all = Array.from({ length: 20 }, (_, i) => i);
    const full = { reason: 'cap', cap: 'PARLEY_WIDGET_THREAD_MAX_MESSAGES', max: 20 };
    const expected: Awaited<ReturnType<typeof widgetStory>> = {
      sameWidget: true,
      document: { topic: 'Plan', content: '# Plan' },
      threadIds: 1,
      created: 1,
      seqs: all,
      refused: [full, full],
      counted: { messages: 20, bytes: true },
      archived: [true, false],
      fresh: true,
    };
    await onBoth(widgetStory, expected);
  }, 60_000);

  test('credits behave the same on both: an ad grants once under a race, concurrent spends stop at zero', async () => {
    const expected: Awaited<ReturnType<typeof creditStory>> = { granted: 1, spent: 10, balance: 0, balances: [['dee', 0], ['nobody', 0]], ledger: 11 };
    await onBoth(creditStory, expected);
  }, 60_000);

  test('history search finds the same messages on both (FTS5 on SQLite, a tsvector column on PostgreSQL)', async () => {
    const expected: Awaited<ReturnType<typeof historyStory>> = {
      three: ['h1:The octopus has three hearts', 'h2:A THREE-day trip to Lisbon'],
      hearts: ['h1:The octopus has three hearts'],
      either: ['h1:Octopuses are clever', 'h2:A THREE-day trip to Lisbon'],
      excluded: ['h2:A THREE-day trip to Lisbon'],
      syntax: [],
      nothing: [],
    };
    await onBoth(historyStory, expected);
  }, 60_000);

  test('leases behave the same on both: one winner of five, renewals keep their start, takeover after expiry, release', async () => {
    const expected: Awaited<ReturnType<typeof leaseStory>> = {
      winners: 1,
      renewed: { holder: true, acquiredAt: NOW, expiresAt: NOW + 1_500 },
      refused: undefined,
      takenOver: { holder: true, acquiredAt: NOW + 1_500 },
      stillOther: true,
      free: true,
      afterRelease: true,
    };
    await onBoth(leaseStory, expected);
  }, 60_000);

  test('after-commit steps run after the commit, in order, and not for a transaction that rolled back', async () => {
    const expected = { log: ['work done', 'first', 'second', 'write resolved: ok', 'after a read'], failed: 'rolled back', hal: null };
    await onBoth(afterCommitStory, expected);
  }, 60_000);

  test('sessions, API keys and push tokens behave the same on both: a token stays with a live holder and moves once it signed out', async () => {
    const expected: Awaited<ReturnType<typeof credentialStory>> = {
      first: true,
      whileLive: false,
      revoked: [true, false],
      afterSignOut: true,
      deliverable: ['ExponentPushToken[shared-tablet]'],
      keyRevoked: null,
      deliverableAfter: [],
      active: [true],
      keys: [NOW + 6],
      pruned: 2,
      gone: null,
      removed: 1,
      left: [],
    };
    await onBoth(credentialStory, expected);
  }, 60_000);

  test('authentication behaves the same on both: lookups by hash, last-used stamps, revocation, the credential cache answering and forgetting', async () => {
    const expected: Awaited<ReturnType<typeof authStory>> = {
      found: { key: true, session: true, unknownKey: null, unknownSession: null, user: 'kit@example.org', unknownUser: null },
      touched: { key: NOW + 1, session: NOW + 2, expires: NOW + 600_002 },
      // The held lookups answer what they read; the next request what was changed meanwhile.
      names: ['', '', '', '', 'Kit', 'Kit C.', 'Kit C.', 'K.', 'K.', 'Kay'],
      used: { key: NOW + 70_000, session: NOW + 70_000, expires: NOW + 70_000 + DAY_MS },
      validBefore: true,
      otherUser: false,
      revokedKey: { key: null, valid: false, session: 'Kay' },
      revokedSession: null,
    };
    await onBoth(authStory, expected);
  }, 60_000);

  test('accounts behave the same on both: unique e-mail, and admins removing each other all at once leave one admin', async () => {
    const expected: Awaited<ReturnType<typeof accountStory>> = {
      added: 10,
      accountType: 'STUDENT',
      duplicate: 'a user with e-mail KIM@example.org already exists',
      found: true,
      done: 9,
      refusals: ['This is the last admin; the server must keep one.'],
      left: 1,
      subscriptionUpdatedAt: NOW + 2,
    };
    await onBoth(accountStory, expected);
  }, 60_000);

  test('login links behave the same on both: one use wins a race, the rest is refused, then pruned', async () => {
    const expected: Awaited<ReturnType<typeof loginLinkStory>> = { peeked: true, uses: ['used', 'won'], expired: { ok: false, reason: 'expired' }, unknown: { ok: false, reason: 'unknown' }, pruned: 2 };
    await onBoth(loginLinkStory, expected);
  }, 60_000);

  test('groups behave the same on both: members sending at once get gap-free event numbers, published in order, and unique positions', async () => {
    const seqs = Array.from({ length: 45 }, (_, i) => i + 1); // 4 joins, 40 messages, 1 leave
    const expected: Awaited<ReturnType<typeof groupStory>> = {
      joins: [true, true, true, true, true],
      sent: 40,
      contents: 40,
      stranger: 'not a member',
      left: [true, false],
      afterLeaving: 'not a member',
      types: ['member.joined', 'message.created', 'member.left'],
      seqs,
      lastSeq: 45,
      published: [...seqs, 46], // and group.deleted, numbered but not stored
      positions: Array.from({ length: 40 }, (_, i) => i),
      deleted: [true, false],
      gone: null,
      eventsLeft: 0,
    };
    await onBoth(groupStory, expected);
  }, 60_000);
});
