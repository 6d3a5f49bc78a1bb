import fc from 'fast-check';
import { setPath } from './input-walk';

/**
 * fast-check arbitraries from an operation's input schema (TypeBox schemas are JSON Schema), so
 * the bad-input properties cover every operation, including ones added later, without a line
 * of their own. Supported: object, string (length, pattern, enum/const), number/integer (bounds),
 * boolean, null, array, anyOf/oneOf/union of literals. Anything else is "any JSON".
 */
type Schema = Record<string, any>;

const anyJson = fc.jsonValue({ maxDepth: 2 });

export function validArb(schema: Schema): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union) && union.length) return fc.oneof(...union.map((s: Schema) => validArb(s)));
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = new Set<string>(schema.required ?? []);
      const model = Object.fromEntries(Object.entries(props).map(([k, v]) => [k, validArb(v)]));
      return fc.record(model, { requiredKeys: Object.keys(props).filter((k) => required.has(k)) });
    }
    case 'string': {
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 40, Math.max(min, 40));
      if (schema.format === 'date-time') return fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString());
      if (schema.pattern !== undefined) return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Infinity));
      return fc.string({ minLength: min, maxLength: max });
    }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validArb(schema.items ?? {}), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 4, 4) });
    default:
      return anyJson;
  }
}

/** One concrete valid input (deterministic): the matrix sends it so that only the credential is wrong. */
export const sampleValid = (schema: Schema): unknown => fc.sample(validArb(schema), { numRuns: 1, seed: 42 })[0];

/** A value of a JSON type the schema does not accept. */
function wrongTypeArb(schema: Schema): fc.Arbitrary<unknown> {
  const types = new Set<string>();
  const collect = (s: Schema) => {
    for (const u of s.anyOf ?? s.oneOf ?? []) collect(u);
    if (s.type) types.add(s.type === 'integer' ? 'number' : s.type);
    if (s.const !== undefined) types.add(s.const === null ? 'null' : typeof s.const);
  };
  collect(schema);
  const pool: [string, fc.Arbitrary<unknown>][] = [
    ['string', fc.string({ maxLength: 8 })],
    ['number', fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))],
    ['boolean', fc.boolean()],
    ['null', fc.constant(null)],
    ['array', fc.array(fc.integer(), { maxLength: 3 })],
    ['object', fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.integer(), { maxKeys: 2 })],
  ];
  const others = pool.filter(([t]) => !types.has(t)).map(([, a]) => a);
  return others.length ? fc.oneof(...others) : fc.constant(undefined);
}

/** Paths (top level and one level down) of the schema's object properties. */
function fieldPaths(schema: Schema, prefix: string[] = [], depth = 0): { path: string[]; schema: Schema; required: boolean }[] {
  if (schema.type !== 'object' || depth > 1) return [];
  const required = new Set<string>(schema.required ?? []);
  return Object.entries((schema.properties ?? {}) as Record<string, Schema>).flatMap(([k, v]) => [
    { path: [...prefix, k], schema: v, required: required.has(k) },
    ...fieldPaths(v, [...prefix, k], depth + 1),
  ]);
}

function deletePath(obj: any, path: string[]): any {
  if (!obj || typeof obj !== 'object') return obj;
  const [head, ...rest] = path;
  const copy = { ...obj };
  if (rest.length) copy[head!] = deletePath(copy[head!], rest);
  else delete copy[head!];
  return copy;
}

/** A raw request: the body text or bytes and its content type. */
export interface RawBody {
  kind: string;
  body: string | Uint8Array | undefined;
  contentType?: string;
}

const json = (kind: string, value: unknown): RawBody => ({ kind, body: JSON.stringify(value), contentType: 'application/json' });

/** Bodies that should never reach a handler as valid input (or, when they happen to be valid, must still not fail). */
export function badBodyArb(schema: Schema): fc.Arbitrary<RawBody> {
  const fields = fieldPaths(schema);
  const base = validArb(schema);
  const arbs: fc.Arbitrary<RawBody>[] = [
    // an extra field at the top, including prototype-looking keys (written into the text:
    // JSON.stringify would drop an own `__proto__` key)
    fc.tuple(base, fc.constantFrom('__proto__', 'constructor', 'extra', 'isAdmin', 'userId'), fc.jsonValue({ maxDepth: 1 })).map(([v, key, val]) => {
      const text = JSON.stringify(v);
      const inject = `${JSON.stringify(key)}:${JSON.stringify(val)}`;
      return { kind: `extra field ${key}`, body: text === '{}' ? `{${inject}}` : `{${inject},${text.slice(1)}`, contentType: 'application/json' };
    }),
    // the body is not an object at all
    fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.boolean(), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 })).map((v) => json('not an object', v)),
    // deep nesting, in place of the body or of a field
    fc.integer({ min: 200, max: 20_000 }).map((depth) => ({ kind: `nesting ${depth}`, body: '['.repeat(depth) + ']'.repeat(depth), contentType: 'application/json' })),
    // non-JSON text
    fc.string({ minLength: 1, maxLength: 30 }).filter((s) => { try { JSON.parse(s); return false; } catch { return s.trim() !== ''; } }).map((s) => ({ kind: 'not JSON', body: s, contentType: 'application/json' })),
    // invalid UTF-8 inside an otherwise JSON-looking body
    fc.uint8Array({ minLength: 1, maxLength: 8 }).map((junk) => ({ kind: 'invalid UTF-8', body: new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, ...junk, 0xff, 0x22, 0x7d]), contentType: 'application/json' })),
    // a content type other than JSON
    fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml').map((t) => ({ kind: `content type ${t}`, body: '{}x', contentType: t })),
  ];
  if (fields.length) {
    const field = fc.constantFrom(...fields);
    arbs.push(
      fc.tuple(base, field).chain(([v, f]) => wrongTypeArb(f.schema).map((w) => json(`wrong type at ${f.path.join('.')}`, setPath(v, f.path, w)))),
      fc.tuple(base, field).map(([v, f]) => json(`huge string at ${f.path.join('.')}`, setPath(v, f.path, 'x'.repeat(300_000)))),
      fc.tuple(base, field, fc.integer({ min: 50, max: 2000 })).map(([v, f, depth]) => {
        let nested: unknown = 'leaf';
        for (let i = 0; i < depth; i++) nested = { a: nested };
        return json(`deep nesting at ${f.path.join('.')}`, setPath(v, f.path, nested));
      }),
      fc.tuple(base, field).map(([v, f]) => ({ kind: `number overflow at ${f.path.join('.')}`, body: JSON.stringify(setPath(v, f.path, 7)).replace(/:7([,}])/, ':1e999$1'), contentType: 'application/json' })),
    );
    // Only strict objects: a free-form object (`additionalProperties` not false, e.g. a widget thread message's `data`) accepts any field.
    const nested = fields.filter((f) => f.schema.type === 'object' && (f.schema as { additionalProperties?: unknown }).additionalProperties === false);
    if (nested.length)
      arbs.push(fc.tuple(base, fc.constantFrom(...nested)).map(([v, f]) => json(`extra field in ${f.path.join('.')}`, setPath(v, [...f.path, 'extra'], 1))));
    const required = fields.filter((f) => f.required && f.path.length === 1);
    if (required.length)
      arbs.push(fc.tuple(base, fc.constantFrom(...required)).map(([v, f]) => json(`missing ${f.path.join('.')}`, deletePath(v, f.path))));
  }
  return fc.oneof(...arbs);
}

/** The fixed cases every operation gets besides the generated ones. */
export const fixedBadBodies: RawBody[] = [
  { kind: 'empty body', body: '', contentType: 'application/json' },
  { kind: 'no body, no content type', body: undefined },
  { kind: 'whitespace body', body: '  \n', contentType: 'application/json' },
  { kind: 'JSON null', body: 'null', contentType: 'application/json' },
  { kind: 'truncated JSON', body: '{"a":', contentType: 'application/json' },
  { kind: 'BOM then JSON', body: '\uFEFF{}', contentType: 'application/json' },
  { kind: 'lone surrogate escape', body: '{"x":"\\ud800"}', contentType: 'application/json' },
  { kind: 'invalid UTF-8', body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), contentType: 'application/json' },
  { kind: 'form body', body: 'a=1&b=2', contentType: 'application/x-www-form-urlencoded' },
  { kind: 'JSON without content type', body: '{}', contentType: undefined },
  { kind: 'many keys', body: JSON.stringify(Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]))), contentType: 'application/json' },
  { kind: 'nesting 5000', body: '['.repeat(5000) + ']'.repeat(5000), contentType: 'application/json' },
];

/** Costly bodies: sent once per run (to one operation), not to every operation. */
export const heavyBadBodies: RawBody[] = [
  { kind: 'huge key count', body: JSON.stringify(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]))), contentType: 'application/json' },
  { kind: 'nesting 100000', body: '['.repeat(100_000) + ']'.repeat(100_000), contentType: 'application/json' },
  { kind: 'object nesting 100000', body: '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000), contentType: 'application/json' },
];
