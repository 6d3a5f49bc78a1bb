import { describe, expect, test } from 'bun:test';
import { TransformKind, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { createConversation } from '../src/chat/conversation.store';
import { createTestContext } from './helpers';
import { sampleValid } from './support/schema-arb';
import { compareDocumentedFields } from './support/documented-fields';
import { createEchoApp, nodesOf, operationInputs as inputs, setPath, withUnknownFields, type Node } from './support/input-walk';

describe('numbers are JSON numbers', () => {
  test('no operation accepts a numeric string where it takes a number, and every default lies within its own bounds', () => {
    for (const { op, schema } of inputs)
      for (const { node, path } of nodesOf(schema)) {
        const where = `${op.path} ${path.join('.')}`;
        expect({ where, transform: TransformKind in node }).toEqual({ where, transform: false });
        expect({ where, stringNumber: node.type === 'string' && ['integer', 'numeric', 'boolean'].includes(node.format) }).toEqual({ where, stringNumber: false });
        if (node.default !== undefined) {
          const { default: value, ...bounds } = node;
          expect({ where, value, withinBounds: Value.Check(bounds as TSchema, value) }).toEqual({ where, value, withinBounds: true });
        }
      }
  });

  test('every numeric field of every operation: the number as a string → 400 naming the field', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    let fields = 0;
    for (const { op, schema } of inputs)
      for (const { node, path } of nodesOf(schema)) {
        if (node.type !== 'integer' && node.type !== 'number') continue;
        // A field that also takes strings (chat/resumeStream's `after` takes a frame id) is not a number field.
        const parent = nodesOf(schema).find((n) => n.path.join('.') === path.join('.') && n.node.anyOf);
        if (parent?.node.anyOf.some((b: Node) => b.type === 'string')) continue;
        fields++;
        const number = node.minimum ?? 1;
        const body = setPath(sampleValid(schema), path, String(number));
        const res = await ctx.json(op.path, body, ann);
        const where = `${op.path} ${path.join('.')} = "${number}"`;
        expect({ where, status: res.status, issuePaths: res.body?.data?.issues?.map((i: any) => i.path.join('.')) }).toEqual({
          where,
          status: 400,
          issuePaths: expect.arrayContaining([path.join('.')]),
        });
      }
    expect(fields).toBeGreaterThanOrEqual(3);
  });

  test('chat/listConversations: "0" and "1000000" are 400 (they were a 500 and everything), numbers outside the bounds too', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    for (let i = 0; i < 3; i++) await ctx.store.read((tx) => createConversation(tx, { ownerId: ann.user.id, title: `c${i}` }));
    for (const limit of ['0', '1000000', '2', 0, 101, 1.5]) expect({ limit, status: (await ctx.json('chat/listConversations', { limit }, ann)).status }).toEqual({ limit, status: 400 });
    expect((await ctx.json('chat/listConversations', { limit: 2 }, ann)).body.conversations).toHaveLength(2);
    expect((await ctx.json('chat/listConversations', {}, ann)).body.conversations).toHaveLength(3);
  });
});

describe('unknown fields are accepted and stripped', () => {
  test('every operation: a valid input with an unknown field in each of its objects (and prototype keys) reaches the handler without them', async () => {
    const echo = createEchoApp(await createTestContext({ users: [{ email: 'ann@example.org' }] }));
    for (const { op, schema } of inputs) {
      const sample = sampleValid(schema);
      // Prototype-looking keys are written into the text: JSON.stringify would drop an own `__proto__`.
      const text = JSON.stringify(withUnknownFields(schema, sample)).replace(/^\{/, '{"__proto__":{"isAdmin":true},"constructor":1,');
      const res = await echo(op.path, text);
      const body = (await res.json()) as any;
      expect({ op: op.path, status: res.status, received: body.input }).toEqual({ op: op.path, status: 200, received: sample });
      expect({ op: op.path, ownProto: Object.hasOwn(body.input, '__proto__') }).toEqual({ op: op.path, ownProto: false });
    }
  });

  test('a known field of the wrong type is still a 400, and its issue alone is reported', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const ann = ctx.users[0]!;
    const res = await ctx.json('preferences/update', { enableMemories: 'yes', futureField: 1 }, ann);
    expect(res.status).toBe(400);
    expect(res.body.data.issues.map((i: any) => i.path)).toEqual([['enableMemories']]);
    expect((await ctx.json('preferences/update', { enableMemories: true, futureField: 1 }, ann)).body).toEqual({ enableMemories: true, showMemoryToolOutput: false });
  });
});

describe('the OpenAPI document says what validation enforces', () => {
  test('integer amounts, non-blank names, the Expo token format, bounds and lengths: the documented schema and the server agree value by value', async () => {
    const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
    const openapi = await (await ctx.app.handle(new Request('http://localhost/api/openapi.json'))).json();
    const send = async (op: string, body: unknown) => {
      const res = await ctx.json(op, body, ctx.users[0]);
      return { status: res.status, body: res.body };
    };
    expect(await compareDocumentedFields(openapi, send)).toEqual([]);
  });
});
