import { describe, expect, test } from 'bun:test';
import { operations } from '../src/app';
import { testConfig } from '../src/config';
import { bodyLimitOf, SMALL_BODY_BYTES } from '../src/http/operation';
import { JSON_MAX_DEPTH, JSON_MAX_KEY_BYTES, JSON_MAX_VALUES } from '../src/http/check-json-shape';
import { createTestContext } from './helpers';

const TOO_LARGE = { defined: false, code: 'PAYLOAD_TOO_LARGE', status: 413 };
// The shape bounds are tried on widget thread messages, whose `data` is free-form: with room for 1 MiB of it.
const [limitsCtx, shapeCtx] = [
  await createTestContext({ users: [{ email: 'ann@example.org' }] }),
  await createTestContext({ users: [{ email: 'ann@example.org' }], config: { widgetMessageMaxBytes: 1024 * 1024 } }),
];

describe('body limits per operation', () => {
  const ctx = limitsCtx;
  const ann = ctx.users[0]!;
  const config = testConfig();
  const limitOf = (path: string) => bodyLimitOf(operations.find((o) => o.path === path)!, config);

  test('kilobytes for most operations, megabytes only where images travel, PARLEY_MAX_BODY_BYTES above all', () => {
    const large = operations.filter((op) => limitOf(op.path) > SMALL_BODY_BYTES).map((op) => [op.path, limitOf(op.path)]);
    expect(Object.fromEntries(large)).toEqual({
      'images/convertImage': Math.ceil(config.imageMaxBytes / 3) * 4 + SMALL_BODY_BYTES,
      'chat/stream': Math.ceil(config.imageMaxBytes / 3) * 4 + SMALL_BODY_BYTES,
      'chat/streamDeepResearch': Math.ceil(config.imageMaxBytes / 3) * 4 + SMALL_BODY_BYTES,
      // The image an avatar is made from, as large as any image Parley takes
      'assistants/setAvatar': Math.ceil(config.imageMaxBytes / 3) * 4 + SMALL_BODY_BYTES,
      'groupChat/sendGroupMessage': 128 * 1024,
      // The largest message (PARLEY_WIDGET_MESSAGE_MAX_BYTES) and room for the rest.
      'widget/addThreadMessage': config.widgetMessageMaxBytes + 4096,
      // multipart/form-data: the recording and room for the framing and its text fields
      'audio/transcribe': config.sttMaxBytes + SMALL_BODY_BYTES,
      // multipart/form-data: the file and room for the framing (streamed to disk, not held)
      'files/upload': config.filesMaxBytes + SMALL_BODY_BYTES,
      // A message of up to PARLEY_SUPPORT_MESSAGE_MAX_CHARS (20,000 at most), each escaped as \uXXXX
      'support/createThread': 128 * 1024,
      'support/sendMessage': 128 * 1024,
      // An admin's answer, the same size as a user's message
      'admin/replySupport': 128 * 1024,
      // A conversation brought in whole from an export (docs/chat.md, "Export and import")
      'chat/importConversation': 4 * 1024 * 1024,
    });
    // The global setting caps every row.
    const capped = testConfig({ maxBodyBytes: 4096 });
    for (const op of operations) expect(bodyLimitOf(op, capped)).toBeLessThanOrEqual(4096);
  });

  test('one byte over an operation\'s limit → 413, at the limit the body is read', async () => {
    for (const path of ['preferences/get', 'groupChat/sendGroupMessage', 'widget/addThreadMessage', 'chat/stream']) {
      const limit = limitOf(path);
      // `{"p":"xxx…"}`: valid JSON of exactly `size` bytes.
      const body = (size: number) => `{"p":"${'x'.repeat(size - 8)}"}`;
      expect(body(limit).length).toBe(limit);
      const over = await ctx.json(path, body(limit + 1), ann);
      expect({ path, status: over.status }).toEqual({ path, status: 413 });
      expect(over.body).toMatchObject(TOO_LARGE);
      const at = await ctx.call(path, body(limit), ann);
      expect({ path, tooLarge: at.status === 413 }).toEqual({ path, tooLarge: false });
      await at.body?.cancel();
    }
  });

  test('the largest legitimate inputs fit: 20,000 characters escaped as \\uXXXX in a group message, a 20 MiB image as a data URL', async () => {
    const group = (await ctx.json('groupChat/createGroupChat', { name: 'g' }, ann)).body;
    // An ASCII-only JSON encoder (Python's default) escapes every other character: 6 bytes each.
    const escaped = `{"groupChatId":"${group.id}","message":"${'\\u00e9'.repeat(20_000)}"}`;
    const sent = await ctx.json('groupChat/sendGroupMessage', escaped, ann);
    expect(sent.status).toBe(200);
    expect(sent.body.content).toBe('é'.repeat(20_000));
    // The base64 of the largest image images/convertImage takes: read, parsed, and refused by the
    // conversion itself (these are not an image's bytes), not by the body limit.
    const dataUrl = `data:image/png;base64,${Buffer.alloc(config.imageMaxBytes).toString('base64')}`;
    const converted = await ctx.json('images/convertImage', { dataUrl }, ann);
    expect(converted.status).toBe(200);
    expect(converted.body.success).toBe(false);
    expect(converted.body.error.code).not.toBe('TOO_LARGE');
  });

  test('/api/openapi.json states each operation\'s body limit, the one this server enforces', async () => {
    const spec = (await (await ctx.app.handle(new Request('http://localhost/api/openapi.json'))).json()) as any;
    for (const op of operations) {
      const body = spec.paths[`/api/${op.path}`].post.requestBody;
      expect({ path: op.path, max: body['x-max-body-bytes'] }).toEqual({ path: op.path, max: bodyLimitOf(op, ctx.deps.config) });
      expect(body.description).toContain(`at most ${bodyLimitOf(op, ctx.deps.config)} bytes`);
    }
  });
});

describe('JSON shape bounds, before the parse', () => {
  const ctx = shapeCtx;
  const ann = ctx.users[0]!;
  const send = (body: string) => ctx.json('widget/addThreadMessage', body, ann);
  /** A widget thread message whose free-form `data` holds `value`: valid input, refused only by the thread lookup (404). */
  const withData = (value: string) => `{"threadId":"none","data":{"v":${value}}}`;

  test('depth: the bound passes, one more level → 413 with a message that says why', async () => {
    // `data` and its object are two levels, so the bound leaves JSON_MAX_DEPTH - 2 for `v`.
    const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    expect((await send(withData(nested(JSON_MAX_DEPTH - 2)))).status).toBe(404);
    const deeper = await send(withData(nested(JSON_MAX_DEPTH - 1)));
    expect(deeper.status).toBe(413);
    expect(deeper.body).toEqual({ ...TOO_LARGE, message: `JSON nests deeper than ${JSON_MAX_DEPTH} levels`, data: {} });
  });

  test('values: the bound passes, one more → 413', async () => {
    // Counted as containers + commas + 1: around the array's n - 1 commas, three containers, one comma and the one.
    const array = (n: number) => `[${Array(n).fill(0).join(',')}]`;
    const fits = JSON_MAX_VALUES - 4;
    expect((await send(withData(array(fits)))).status).toBe(404);
    const more = await send(withData(array(fits + 1)));
    expect(more.status).toBe(413);
    expect(more.body).toEqual({ ...TOO_LARGE, message: `JSON has more than ${JSON_MAX_VALUES} values`, data: {} });
  });

  test('keys: the bound passes, one byte more → 413; a string value of any length is no key', async () => {
    const key = (bytes: number) => withData(`{${JSON.stringify('k'.repeat(bytes))} : 1}`);
    expect((await send(key(JSON_MAX_KEY_BYTES))).status).toBe(404);
    const longer = await send(key(JSON_MAX_KEY_BYTES + 1));
    expect(longer.status).toBe(413);
    expect(longer.body).toEqual({ ...TOO_LARGE, message: `JSON has a key longer than ${JSON_MAX_KEY_BYTES} bytes`, data: {} });
    expect((await send(withData(JSON.stringify('v'.repeat(100_000))))).status).toBe(404);
  });

  test('string contents are skipped, escaped quotes and backslashes included: brackets and commas inside strings count for nothing', async () => {
    const tricky = JSON.stringify(`\\"${'[{,'.repeat(20_000)}\\\\"\\`);
    expect((await send(withData(`[${tricky},${tricky}]`))).status).toBe(404);
  });
});
