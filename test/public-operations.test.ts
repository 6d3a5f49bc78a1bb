import { describe, expect, test } from 'bun:test';
import { Elysia, t } from 'elysia';
import { createTestContext, bearer, SPEC_ERRORS } from './helpers';
import { defineOperation } from '../src/http/operation';
import { registerOperations } from '../src/http/register';

// Two rows that differ only in `public`, mounted the way createApp mounts every row.
const whoami = (isPublic: boolean) =>
  isPublic
    ? defineOperation({
        path: 'test/publicWhoami',
        public: true,
        summary: 'who is calling, if anyone',
        input: t.Object({ echo: t.Optional(t.String()) }),
        output: t.Object({ email: t.Union([t.String(), t.Null()]), echo: t.Union([t.String(), t.Null()]) }),
        handler: ({ user, input }) => ({ email: user?.email ?? null, echo: input.echo ?? null }),
      })
    : defineOperation({
        path: 'test/privateWhoami',
        summary: 'who is calling',
        input: t.Object({}),
        output: t.Object({ email: t.String() }),
        handler: ({ user }) => ({ email: user.email }),
      });

const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
const ann = ctx.users[0]!;

describe('public operations', () => {
  const app = new Elysia();
  registerOperations(app, [whoami(true), whoami(false)], ctx.deps);
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    app.handle(new Request(`http://localhost/api/${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } }));

  test('answer without a credential, and see the user when one is sent', async () => {
    expect(await (await post('test/publicWhoami', { echo: 'hi' })).json()).toEqual({ email: null, echo: 'hi' });
    expect(await (await post('test/publicWhoami', {}, { 'x-api-key': ann.key })).json()).toEqual({ email: 'ann@example.org', echo: null });
    expect(await (await post('test/publicWhoami', {}, bearer(ann))).json()).toEqual({ email: 'ann@example.org', echo: null });
    // an unknown credential does not lock a public operation
    expect((await post('test/publicWhoami', {}, { authorization: 'Bearer ps_unknown' })).status).toBe(200);
  });

  test('still validate input; rows without the flag still answer 401', async () => {
    const bad = await post('test/publicWhoami', { echo: 1 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).data.issues[0].path).toEqual(['echo']);
    const anon = await post('test/privateWhoami', {});
    expect(anon.status).toBe(401);
    expect(await anon.json()).toEqual(SPEC_ERRORS[401]);
    expect(await (await post('test/privateWhoami', {}, { 'x-api-key': ann.key })).json()).toEqual({ email: 'ann@example.org' });
  });
});
