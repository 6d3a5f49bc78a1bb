import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createTestContext, onPg, type TestContext, type TestUser } from './helpers';
import { readFrames, typesOf } from './sse';
import { groupWith } from './group-helpers';
import { startFakeOpenAI, textEvents } from './fakes/openai';
import { appendItem, listItems } from '../src/chat/conversation.store';
import { EXPORT_COLUMNS } from '../src/feedback/feedback-export';

// These tests spawn processes; shared machines can be slow, and no test here asserts on time.
setDefaultTimeout(60_000);

const root = new URL('..', import.meta.url).pathname;
const openai = startFakeOpenAI();
afterAll(() => openai.stop());

const T1 = Date.parse('2026-03-01T10:00:00.000Z');
const T2 = Date.parse('2026-03-02T10:00:00.000Z');
const T3 = Date.parse('2026-03-03T10:00:00.000Z');
const COMMENT = 'She said "no", twice;\r\nthen, "yes"';

/**
 * A database with three ratings: a chat answer and a research report written by real turns (the
 * fake provider), and a group's assistant message. On SQLite a file the CLI opens with
 * --data-dir; on PostgreSQL the context's database, which the CLI opens with PARLEY_DATABASE_URL.
 */
async function seed() {
  let clock = T1;
  const ctx = await createTestContext({
    users: [{ email: 'ann@example.org' }, { email: 'bob@example.org' }],
    durable: true,
    now: () => clock,
    config: { aiProvider: 'openai-responses', aiBaseUrl: openai.url, aiApiKey: 'sk-test', aiModel: 'chat-model', researchModel: 'research-model' },
  });
  const [ann, bob] = ctx.users as [TestUser, TestUser];
  openai.responsesScript = () => textEvents('Four.');
  const chat = await turn(ctx, ann, 'chat/stream', 'What is 2 + 2?');
  openai.responsesScript = () => textEvents('Cats sleep a lot, say the sources.');
  const research = await turn(ctx, ann, 'chat/streamDeepResearch', 'Research cats');

  const group = await groupWith(ctx, ann, [bob]);
  const add = (role: 'user' | 'assistant', content: string, authorId?: string) => ctx.store.write((tx) => appendItem(tx, { conversationId: group.conversationId, role, content, authorId }));
  await add('user', '@AI where shall we eat?', bob.user.id);
  // Written while the assistant was answering: not what it answered.
  await add('user', 'me too', ann.user.id);
  const groupAnswer = await add('assistant', 'Try the bistro on the corner.');

  const rate = async (body: object, as: TestUser, at: number) => {
    clock = at;
    expect((await ctx.json('feedback/setFeedback', body, as)).status).toBe(200);
  };
  await rate({ itemId: chat.id, rating: 'up', reasons: ['helpful', 'accurate'] }, ann, T1);
  await rate({ itemId: research.id, rating: 'down', reasons: ['too_short'], comment: COMMENT }, ann, T2);
  await rate({ groupChatId: group.id, messageId: groupAnswer.id, rating: 'down', reasons: ['off_topic'] }, bob, T3);
  const where: Record<string, string> = onPg ? { PARLEY_DATABASE_URL: ctx.deps.config.databaseUrl! } : { PARLEY_DATA_DIR: dirname(ctx.db.$client.filename) };
  return { ctx, ann, bob, chat, research, group, groupAnswer, env: { PARLEY_DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-fb-')), ...where } };
}

/** Run one AI turn to its end; the assistant item it stored. */
async function turn(ctx: TestContext, as: TestUser, path: string, message: string) {
  const frames = await readFrames(await ctx.call(path, { message }, as));
  expect(typesOf(frames).at(-1)).toBe('done');
  const conversationId = frames.find((f) => f.data.type === 'conversation.created')!.data.conversationId;
  return (await ctx.store.read((tx) => listItems(tx, conversationId))).find((i) => i.role === 'assistant')!;
}

function parley(args: string[], env: Record<string, string>) {
  const p = Bun.spawnSync([process.execPath, join(root, 'cli/main.ts'), 'feedback', 'export', ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdout: 'pipe', stderr: 'pipe' });
  return { code: p.exitCode, out: p.stdout.toString(), err: p.stderr.toString() };
}

/** RFC 4180, read independently of the writer: records of fields. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      for (i++; ; i++) {
        if (text[i] === '"' && text[i + 1] === '"') (field += '"'), i++;
        else if (text[i] === '"') break;
        else field += text[i];
      }
      i++;
    } else if (text[i] === ',') (fields.push(field), (field = '')), i++;
    else if (text.startsWith('\r\n', i)) (fields.push(field), records.push(fields), (fields = []), (field = '')), (i += 2);
    else if (text[i] === '\n' || text[i] === '\r') throw new Error(`a bare line break outside quotes at ${i}`);
    else (field += text[i]), i++;
  }
  if (field || fields.length) throw new Error('the last record does not end with CRLF');
  return records;
}

describe('parley feedback export', () => {
  test('jsonl: one record per rating, oldest change first, with question, answer, model, kind and user; --since; --out', async () => {
    const s = await seed();
    const r = parley([], s.env);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    const lines = r.out.split('\n');
    expect(lines.pop()).toBe('');
    const records = lines.map((l) => JSON.parse(l));
    expect(records.map((x) => Object.keys(x))).toEqual(records.map(() => [...EXPORT_COLUMNS]));
    expect(records[0]).toEqual({
      id: expect.any(String),
      createdAt: '2026-03-01T10:00:00.000Z',
      updatedAt: '2026-03-01T10:00:00.000Z',
      kind: 'chat',
      rating: 'up',
      reasons: ['accurate', 'helpful'],
      comment: null,
      question: 'What is 2 + 2?',
      answer: 'Four.',
      model: 'env-ai/chat-model',
      userId: s.ann.user.id,
      userEmail: 'ann@example.org',
      conversationId: s.chat.conversationId,
      itemId: s.chat.id,
      groupChatId: null,
    });
    expect(records[1]).toMatchObject({
      kind: 'research',
      rating: 'down',
      reasons: ['too_short'],
      comment: COMMENT,
      question: 'Research cats',
      answer: 'Cats sleep a lot, say the sources.',
      model: 'env-ai/research-model',
      itemId: s.research.id,
      groupChatId: null,
    });
    expect(records[2]).toMatchObject({
      kind: 'group',
      rating: 'down',
      reasons: ['off_topic'],
      // The message that addressed the assistant, not the one written meanwhile.
      question: '@AI where shall we eat?',
      answer: 'Try the bistro on the corner.',
      model: null,
      userId: s.bob.user.id,
      userEmail: 'bob@example.org',
      conversationId: s.group.conversationId,
      itemId: s.groupAnswer.id,
      groupChatId: s.group.id,
    });

    // --since: ratings set or changed at or after it (a date alone is midnight UTC).
    const since = (arg: string) => parley(['--since', arg], s.env).out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).itemId);
    expect(since('2026-03-02')).toEqual([s.research.id, s.groupAnswer.id]);
    expect(since('2026-03-02T10:00:00.001Z')).toEqual([s.groupAnswer.id]);
    expect(since('2026-03-03T12:00+02:00')).toEqual([s.groupAnswer.id]);
    expect(since('2027-01-01')).toEqual([]);

    // --out: the same records in the file, a summary on stdout, no temporary file left beside it.
    const dir = mkdtempSync(join(tmpdir(), 'parley-fb-out-'));
    const file = join(dir, 'ratings.jsonl');
    const out = parley(['--out', file], s.env);
    expect({ code: out.code, out: out.out, err: out.err }).toEqual({ code: 0, out: `exported 3 rating(s) to ${file}\n`, err: '' });
    expect(readFileSync(file, 'utf8')).toBe(r.out);
    const json = parley(['--out', file, '--since', '2026-03-03', '--json'], s.env);
    expect(JSON.parse(json.out)).toEqual({ exported: 1, out: file });
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(readdirSync(dir)).toEqual(['ratings.jsonl']);
  });

  test('csv: RFC 4180, a header and the same values, quotes and line breaks kept', async () => {
    const s = await seed();
    const jsonl = parley([], s.env)
      .out.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const r = parley(['--format', 'csv'], s.env);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: '' });
    const [header, ...rows] = parseCsv(r.out);
    expect(header).toEqual([...EXPORT_COLUMNS]);
    const asText = (rec: any) => EXPORT_COLUMNS.map((c) => (c === 'reasons' ? rec.reasons.join(';') : (rec[c] ?? '')));
    expect(rows).toEqual(jsonl.map(asText));
    // The comment's quotes doubled, the whole field quoted: its comma, semicolon and CRLF stay inside.
    expect(r.out).toContain('"She said ""no"", twice;\r\nthen, ""yes"""');
    expect(rows[0]!.slice(3, 6)).toEqual(['chat', 'up', 'accurate;helpful']);
  });

  test('bad flags: exit code 1 with a clear message, nothing written', async () => {
    const env = { PARLEY_DATA_DIR: mkdtempSync(join(tmpdir(), 'parley-fb-bad-')) };
    const file = join(env.PARLEY_DATA_DIR, 'out.csv');
    const cases: [string[], string][] = [
      [['--format', 'xml', '--out', file], "argument 'xml' is invalid. Allowed choices are jsonl, csv"],
      [['--since', 'yesterday', '--out', file], 'Not an ISO 8601 date'],
      [['--since', '2026-02-30'], 'Not an ISO 8601 date'],
      [['--sinse', '2026-01-01'], "unknown option '--sinse'"],
    ];
    for (const [args, says] of cases) {
      const r = parley(args, env);
      expect({ args, code: r.code, out: r.out }).toEqual({ args, code: 1, out: '' });
      expect(r.err).toContain(says);
    }
    // A file that cannot be written is a refusal (2), as every parley command's.
    const unwritable = parley(['--out', join(env.PARLEY_DATA_DIR, 'missing', 'out.csv')], env);
    expect({ code: unwritable.code, err: unwritable.err }).toEqual({ code: 2, err: `parley: --out ${join(env.PARLEY_DATA_DIR, 'missing', 'out.csv')} cannot be written: ENOENT\n` });
    // Refused before the database was opened or made.
    expect(readdirSync(env.PARLEY_DATA_DIR)).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });
});
