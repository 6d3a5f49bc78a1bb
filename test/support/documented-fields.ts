/**
 * Fields whose rules the OpenAPI document must state as the server applies them: for each, a
 * body around it and values on both sides of every rule (integer only, bounds, not blank, the
 * Expo token format, lengths). `compareDocumentedFields` checks, value by value, that the
 * documented schema and the server give the same verdict.
 */
const uuid = '0b6f4c2e-1d3a-4f5b-8c7d-9e0f1a2b3c4d';
export const DOCUMENTED_FIELDS: { op: string; base: Record<string, unknown>; field: string; values: unknown[] }[] = [
  { op: 'credits/grantAdReward', base: { adId: 'ad-1' }, field: 'amount', values: [1, 7, 0, -1, 1.5, 1e-9, '5', null] },
  { op: 'bookmarks/createGroup', base: {}, field: 'name', values: ['Reading', ' a ', '', ' ', '\t\n\u00a0', 'x'.repeat(200), 'x'.repeat(201)] },
  {
    op: 'notifications/registerPushToken',
    base: { platform: 'ios' },
    field: 'token',
    values: [
      'ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]', 'ExpoPushToken[abc]', 'ExponentPushToken[]', 'ExponentPushToken[a\nb]', uuid, uuid.toUpperCase(),
      'ExponentPushToken[abc', 'exponentpushtoken[abc]', 'xExpoPushToken[abc]', 'abc', '', `${uuid}\n`, uuid.replace(/-/g, ''), `ExpoPushToken[${'x'.repeat(600)}]`,
    ],
  },
  { op: 'chat/listConversations', base: {}, field: 'limit', values: [1, 100, 0, 101, 2.5, '5'] },
  { op: 'groupChat/listMessages', base: { groupChatId: 'g' }, field: 'limit', values: [1, 200, 0, 201, '5'] },
  { op: 'groupChat/sendGroupMessage', base: { groupChatId: 'g' }, field: 'message', values: ['hi', '', 'x'.repeat(20_000), 'x'.repeat(20_001)] },
  { op: 'auth/createApiKey', base: {}, field: 'name', values: ['k', '', 'x'.repeat(100), 'x'.repeat(101)] },
  { op: 'chat/resumeStream', base: { responseId: 'r' }, field: 'after', values: [0, 3, -1, 1.5, '3', 'r:3'] },
];

type Schema = Record<string, any>;

/**
 * Whether a value satisfies a documented field schema (plain JSON Schema, as /api/openapi.json
 * gives it), for the keywords Parley's input schemas use.
 */
export function conforms(schema: Schema, value: unknown): boolean {
  if (schema.anyOf) return (schema.anyOf as Schema[]).some((s) => conforms(s, value));
  if ('const' in schema) return value === schema.const;
  switch (schema.type) {
    case 'integer':
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value) || (schema.type === 'integer' && !Number.isInteger(value))) return false;
      return !(value < (schema.minimum ?? -Infinity) || value > (schema.maximum ?? Infinity));
    }
    case 'string': {
      if (typeof value !== 'string') return false;
      if (value.length < (schema.minLength ?? 0) || value.length > (schema.maxLength ?? Infinity)) return false;
      return schema.pattern === undefined || new RegExp(schema.pattern).test(value);
    }
    case 'boolean':
      return typeof value === 'boolean';
    default:
      throw new Error(`no verdict for a documented schema of type ${schema.type}`);
  }
}

/**
 * The fields whose documented verdict and the server's differ, as readable lines. `send` posts a
 * body and answers the status and parsed body; the server refuses a value when it answers 400
 * with an issue naming the field (any other answer means validation let it through).
 */
export async function compareDocumentedFields(
  openapi: any,
  send: (op: string, body: unknown) => Promise<{ status: number; body: any }>,
): Promise<string[]> {
  const mismatches: string[] = [];
  for (const { op, base, field, values } of DOCUMENTED_FIELDS) {
    const schema = openapi.paths[`/api/${op}`]?.post?.requestBody?.content?.['application/json']?.schema?.properties?.[field];
    if (!schema) {
      mismatches.push(`${op} ${field}: not documented`);
      continue;
    }
    for (const value of values) {
      const { status, body } = await send(op, { ...base, [field]: value });
      const refused = status === 400 && (body?.data?.issues ?? []).some((i: any) => i.path?.join('.') === field);
      if (refused === conforms(schema, value))
        mismatches.push(`${op} ${field} = ${JSON.stringify(value).slice(0, 40)}: documented ${JSON.stringify(schema)} says ${refused ? 'valid' : 'invalid'}, the server ${refused ? 'refused' : 'accepted'} it`);
    }
  }
  return mismatches;
}
