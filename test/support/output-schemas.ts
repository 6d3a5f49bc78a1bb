import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * What an output schema of /api/openapi.json must not say: a type that only an input may take.
 * Elysia's `t.Integer`, `t.Numeric` and `t.BooleanString` put a string twin (`{type: string,
 * format: integer}`) beside the number so that a query string's `"5"` passes; in an answer that
 * twin is a lie (the number is always sent as a number), a contract test run refuses correct
 * answers over it, and a generated client types the field `string | number`.
 */
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
/** `format`s of a string that stands for another JSON type (Elysia's twins and encoded objects). */
const ENCODED = new Set(['integer', 'numeric', 'number', 'boolean', 'ObjectString', 'ArrayString', 'ArrayQuery']);
const SCALAR = new Set(['number', 'integer', 'boolean']);

const typesOf = (s: Record<string, unknown>): string[] => (Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : []);

/** Every place in `schema` (a JSON pointer under `at`) that types an output as an input may be written. */
export function inputOnlyTypes(schema: unknown, at = ''): string[] {
  if (!schema || typeof schema !== 'object') return [];
  if (Array.isArray(schema)) return schema.flatMap((s, i) => inputOnlyTypes(s, `${at}/${i}`));
  const s = schema as Record<string, unknown>;
  const found: string[] = [];
  const types = typesOf(s);
  for (const t of types) if (!JSON_TYPES.has(t)) found.push(`${at}: type ${t} is not a JSON type`);
  if (types.includes('string') && typeof s.format === 'string' && ENCODED.has(s.format)) found.push(`${at}: a string of format ${s.format} (a number or boolean written as text)`);
  if (types.includes('string') && types.some((t) => SCALAR.has(t))) found.push(`${at}: type [${types.join(', ')}] lets a number or boolean be a string`);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = s[key];
    if (!Array.isArray(branches)) continue;
    const kinds = branches.flatMap((b) => typesOf((b ?? {}) as Record<string, unknown>));
    if (kinds.includes('string') && kinds.some((t) => SCALAR.has(t))) found.push(`${at}/${key}: a string beside ${kinds.filter((t) => SCALAR.has(t)).join(', ')}`);
  }
  for (const [k, v] of Object.entries(s)) if (v && typeof v === 'object') found.push(...inputOnlyTypes(v, `${at}/${k}`));
  return found;
}

/** Every response schema of every operation of an OpenAPI document, with where it is. */
export function responseSchemas(doc: any): { where: string; schema: unknown }[] {
  const out: { where: string; schema: unknown }[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(item)) {
      if (!op || typeof op !== 'object' || !op.responses) continue;
      for (const [status, response] of Object.entries<any>(op.responses))
        for (const [media, content] of Object.entries<any>(response.content ?? {})) out.push({ where: `${method.toUpperCase()} ${path} ${status} ${media}`, schema: content.schema });
    }
  if (doc.components?.schemas) for (const [name, schema] of Object.entries(doc.components.schemas)) out.push({ where: `#/components/schemas/${name}`, schema });
  return out;
}

/**
 * A validator of answers against the document's own 200 schemas, as a third-party contract run
 * does it (JSON Schema 2020-12, which OpenAPI 3.1 uses; formats checked): the list of what is
 * wrong with `body` as an answer of `operation`, empty when it validates.
 */
export function answerChecker(doc: any): (operation: string, body: unknown) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ components: doc.components }, 'doc');
  return (operation, body) => {
    const schema = doc.paths[`/api/${operation}`]?.post?.responses?.[200]?.content?.['application/json']?.schema;
    if (!schema) return [`${operation}: no JSON 200 schema in the document`];
    const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')));
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${operation}${e.instancePath}: ${e.message}`);
  };
}
