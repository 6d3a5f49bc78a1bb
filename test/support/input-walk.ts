import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { createApp, operations } from '../../src/app';
import { compileInput } from '../../src/http/body';
import type { TestContext } from '../helpers';

/** A schema node (TypeBox schemas are JSON Schema with symbol markers). */
export type Node = TSchema & Record<string, any>;
export type ValuePath = (string | number)[];

/** Every operation with its input schema as validation applies and documents it. */
/** JSON inputs only: an upload's fields come as multipart parts, read by its handler (src/http/upload.ts). */
export const operationInputs = operations.filter((op) => !op.upload).map((op) => ({ op, schema: compileInput(op.input).schema as Node }));

/** Every node of a schema with its path in the value (index 0 for array items; a union's branches share its path). */
export function nodesOf(schema: Node, path: ValuePath = []): { node: Node; path: ValuePath }[] {
  const inner = [
    ...Object.entries((schema.properties ?? {}) as Record<string, Node>).flatMap(([k, v]) => nodesOf(v, [...path, k])),
    ...(schema.items ? nodesOf(schema.items, [...path, 0]) : []),
    ...((schema.anyOf ?? []) as Node[]).flatMap((b) => nodesOf(b, path)),
  ];
  return [{ node: schema, path }, ...inner];
}

/** A copy of `value` with `leaf` at `path`, making the objects and arrays on the way. */
export function setPath(value: any, path: ValuePath, leaf: unknown): any {
  if (!path.length) return leaf;
  const [head, ...rest] = path;
  const copy = Array.isArray(value) ? [...value] : value && typeof value === 'object' ? { ...value } : {};
  copy[head!] = setPath(copy[head!] ?? (typeof rest[0] === 'number' ? [] : {}), rest, leaf);
  return copy;
}

/**
 * The value with `extra` fields added to every object the schema describes by its properties
 * (free-form objects, such as a widget message's `data`, are left alone: their fields are data).
 */
export function withUnknownFields(schema: Node, value: any, extra: Record<string, unknown> = { futureField: { nested: [1, { deeper: true }] } }): any {
  if (schema.anyOf) {
    const branch = (schema.anyOf as Node[]).find((b) => Value.Check(b, value));
    return branch ? withUnknownFields(branch, value, extra) : value;
  }
  if (schema.type === 'array' && Array.isArray(value)) return value.map((v) => withUnknownFields(schema.items, v, extra));
  if (schema.type !== 'object' || !schema.properties || !value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = { ...extra };
  for (const [k, v] of Object.entries(value)) out[k] = schema.properties[k] ? withUnknownFields(schema.properties[k], v, extra) : v;
  return out;
}

/**
 * Every real operation row with its handler replaced by one that answers `{input}`: what a
 * handler would have been given, after authentication, body reading and validation (whoever may
 * call it: the admin-only check is the authorisation matrix's and test/admin.test.ts's).
 */
export function createEchoApp(ctx: TestContext) {
  const app = createApp(ctx.deps, operations.map((op) => ({ ...op, kind: 'json' as const, rateLimit: undefined, admin: undefined, handler: ({ input }: { input: unknown }) => ({ input }) })));
  return (path: string, body: string) =>
    app.handle(new Request(`http://localhost/api/${path}`, { method: 'POST', headers: { 'x-api-key': ctx.users[0]!.key, 'content-type': 'application/json' }, body }));
}
