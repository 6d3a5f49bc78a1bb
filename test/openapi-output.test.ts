import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { updateUser } from '../src/account/account.store';
import { openDataDir } from '../src/db/connection';
import { createNewsPost } from '../src/news/news.store';
import { createTestContext, onPg, seedUser } from './helpers';
import { answerChecker, inputOnlyTypes, responseSchemas } from './support/output-schemas';

/**
 * /api/openapi.json's answers say exactly what is sent: no output typed as an input may be written
 * (`memberCount` was `anyOf: [{type: string, format: integer}, {type: integer}]`), and real
 * answers validate against their documented schema as a third-party contract run checks them.
 */

const dataDir = join(mkdtempSync(join(tmpdir(), 'parley-openapi-')), 'data');
if (onPg) mkdirSync(dataDir, { mode: 0o700 });
const ctx = await createTestContext({ db: onPg ? undefined : openDataDir(dataDir), config: { dataDir, aiProvider: 'none' } as never });
const ann = await seedUser(ctx.store, { email: 'ann@example.org', name: 'Ann' }, ctx.deps.config);
await ctx.store.write((tx) => updateUser(tx, ann.user.id, { isAdmin: true }, Date.now()));
const bob = await seedUser(ctx.store, { email: 'bob@example.org', name: 'Bob' }, ctx.deps.config);
afterAll(() => onPg || ctx.db.$client.close());

const doc: any = await (await ctx.app.handle(new Request('http://localhost/api/openapi.json'))).json();

describe('OpenAPI: output schemas', () => {
  test('no response schema of any operation types a value as an input may be written (string-encoded numbers, a numeric string beside a number)', () => {
    const schemas = responseSchemas(doc);
    expect(schemas.length).toBeGreaterThan(doc.paths ? Object.keys(doc.paths).length : 0);
    expect(schemas.flatMap(({ where, schema }) => inputOnlyTypes(schema, where))).toEqual([]);
  });

  test('the walk finds what it is for (it is no test if it cannot fail)', () => {
    const twin = { anyOf: [{ type: 'string', format: 'integer', default: 0 }, { type: 'integer' }] };
    expect(inputOnlyTypes({ type: 'object', properties: { memberCount: twin } }, 'x')).toEqual(['x/properties/memberCount/anyOf: a string beside integer', 'x/properties/memberCount/anyOf/0: a string of format integer (a number or boolean written as text)']);
    expect(inputOnlyTypes({ type: ['string', 'number'] }, 'y')).toEqual(['y: type [string, number] lets a number or boolean be a string']);
    expect(inputOnlyTypes({ type: 'Date' }, 'z')).toEqual(['z: type Date is not a JSON type']);
    expect(inputOnlyTypes({ type: 'integer', minimum: 1 }, 'ok')).toEqual([]);
  });

  test('real answers validate against their documented output schema (counts, sizes, lists)', async () => {
    const check = answerChecker(doc);
    const wrong: string[] = [];
    const answer = async (path: string, body: unknown, as = ann) => {
      const res = await ctx.json(path, body, as);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      wrong.push(...check(path, res.body));
      return res.body;
    };
    const group = await answer('groupChat/createGroupChat', { name: 'Trip' });
    const invite = await answer('groupChat/createInvite', { groupChatId: group.id });
    await answer('groupChat/joinGroup', { code: invite.code }, bob);
    const groups = await answer('groupChat/listGroupChats', {});
    expect(groups.groupChats[0].memberCount).toBe(2);
    expect((await answer('groupChat/setModel', { groupChatId: group.id, model: null })).model).toBeNull();
    expect((await answer('groupChat/setAssistant', { groupChatId: group.id, assistantId: null })).assistantId).toBeNull();
    await ctx.store.write((tx) => createNewsPost(tx, { title: 'Hello', body: 'First post' }, Date.now()));
    expect((await answer('news/list', {})).unreadCount).toBe(1);
    expect((await answer('news/markRead', { all: true })).unreadCount).toBe(0);
    const thread = await answer('support/createThread', { subject: 'Help', message: 'It broke' });
    await answer('support/listThreads', {});
    await answer('support/getThread', { threadId: thread.thread.id });
    if (!onPg) {
      const backup = await answer('admin/createBackup', {});
      expect(typeof backup.backup.bytes).toBe('number');
      expect(typeof (await answer('admin/listBackups', {})).keep).toBe('number');
    }
    await answer('auth/getSession', {});
    await answer('auth/listApiKeys', {});
    await answer('subscription/getStatus', {});
    await answer('admin/listUsers', {});
    await answer('setup/getStatus', {});
    const found = await answer('admin/discoverServers', {});
    expect(found.ports.every(Number.isInteger)).toBe(true);
    expect(wrong).toEqual([]);
    // And the checker refuses what the document does not allow.
    expect(check('groupChat/listGroupChats', { groupChats: [{ ...groups.groupChats[0], memberCount: '2' }] }).length).toBeGreaterThan(0);
  }, 30_000);
});
