import type { Database } from 'bun:sqlite';
import type { SQL } from 'bun';
import type { TablePlan } from './table-plan';

/** Rows per page: bounded memory on a 1 GB board, few round trips. */
export const PAGE_ROWS = 500;

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const kindOf = (t: TablePlan, column: string) => t.columns.find((c) => c.name === column)!.kind;

/**
 * A table's rows in primary-key order, a page at a time, by keyset (the key after the last row
 * read, never OFFSET). Both databases order text bytewise (SQLite's BINARY, PostgreSQL's "C"),
 * so the two sides list the same rows in the same order and their checksums can be compared.
 */
export function* sqlitePages(db: Database, t: TablePlan, size = PAGE_ROWS): Generator<Record<string, unknown>[]> {
  const cols = t.columns.map((c) => q(c.name)).join(', ');
  const keyed = t.key.map((k) => (kindOf(t, k) === 'text' ? `${q(k)} COLLATE BINARY` : q(k))).join(', ');
  const first = db.query<Record<string, unknown>, []>(`SELECT ${cols} FROM ${q(t.name)} ORDER BY ${keyed} LIMIT ${size}`);
  const next = db.query<Record<string, unknown>, any[]>(
    `SELECT ${cols} FROM ${q(t.name)} WHERE (${keyed}) > (${t.key.map(() => '?').join(', ')}) ORDER BY ${keyed} LIMIT ${size}`,
  );
  let page = first.all();
  while (page.length) {
    yield page;
    if (page.length < size) return;
    const last = page[page.length - 1]!;
    page = next.all(...t.key.map((k) => last[k] as never));
  }
}

export async function* pgPages(sql: SQL, t: TablePlan, size = PAGE_ROWS): AsyncGenerator<Record<string, unknown>[]> {
  // A vector as SQLite holds it: base64 without the line breaks PostgreSQL's encode() puts every 76 characters.
  const cols = t.columns.map((c) => (c.kind === 'vector' ? `translate(encode(${q(c.name)}, 'base64'), E'\n', '') AS ${q(c.name)}` : q(c.name))).join(', ');
  const keyed = t.key.map((k) => (kindOf(t, k) === 'text' ? `${q(k)} COLLATE "C"` : q(k))).join(', ');
  const params = t.key.map((k, i) => `$${i + 1}::${kindOf(t, k) === 'text' ? 'text' : 'bigint'}`).join(', ');
  let after: unknown[] | undefined;
  while (true) {
    const where = after ? `WHERE (${keyed}) > (${params})` : '';
    const page: Record<string, unknown>[] = await sql.unsafe(`SELECT ${cols} FROM ${q(t.name)} ${where} ORDER BY ${keyed} LIMIT ${size}`, after ?? []);
    if (!page.length) return;
    yield [...page];
    if (page.length < size) return;
    const last = page[page.length - 1]!;
    after = t.key.map((k) => last[k]);
  }
}

/**
 * `INSERT INTO t (…) VALUES (…), …` for PostgreSQL, each parameter cast to its column's type.
 * JSON arrives as text and is cast text → jsonb, so the server parses it: a parameter typed jsonb
 * would have Bun's client encode the string again, and store it as one JSON string. A vector
 * arrives as base64 and is decoded into bytea there.
 */
export function pgInsert(t: TablePlan, rows: number): string {
  const cast = { text: 'text', integer: 'bigint', boolean: 'boolean', json: 'text::jsonb' } as const;
  const width = t.columns.length;
  const param = (kind: TablePlan['columns'][number]['kind'], n: number) => (kind === 'vector' ? `decode($${n}::text, 'base64')` : `$${n}::${cast[kind]}`);
  const values = Array.from({ length: rows }, (_, r) => `(${t.columns.map((c, i) => param(c.kind, r * width + i + 1)).join(', ')})`);
  return `INSERT INTO ${q(t.name)} (${t.columns.map((c) => q(c.name)).join(', ')}) VALUES ${values.join(', ')}`;
}

export const sqliteInsert = (t: TablePlan) =>
  `INSERT INTO ${q(t.name)} (${t.columns.map((c) => q(c.name)).join(', ')}) VALUES (${t.columns.map(() => '?').join(', ')})`;

export const countSql = (t: TablePlan) => `SELECT count(*) AS n FROM ${q(t.name)}`;
