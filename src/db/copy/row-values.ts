import { createHash, type Hash } from 'node:crypto';
import type { ColumnKind, TablePlan } from './table-plan';

/**
 * One value in a form both databases give alike, for the checksums: SQLite hands back integers
 * as numbers, booleans as 0/1 and JSON as its text; Bun's PostgreSQL client hands back bigint as
 * a string, booleans as booleans and jsonb parsed (its keys reordered and spaces dropped). So
 * integers compare as decimal strings, booleans as true/false, JSON by its parsed value with
 * keys sorted.
 */
export function canonical(kind: ColumnKind, v: unknown, from: 'sqlite' | 'pg'): string {
  if (v === null || v === undefined) return 'null';
  switch (kind) {
    case 'text':
    case 'vector':
      return JSON.stringify(v);
    case 'integer':
      return String(v);
    case 'boolean':
      return from === 'sqlite' ? String(sqliteBoolean(v)) : String(v === true);
    case 'json':
      return stableJson(from === 'sqlite' ? JSON.parse(String(v)) : v);
  }
}

function sqliteBoolean(v: unknown): boolean {
  if (v === 0 || v === 1 || v === 0n || v === 1n) return Number(v) === 1;
  throw new Error(`not a boolean: ${String(v)}`);
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** A table's row count and the SHA-256 of its rows in key order, each row in canonical form. */
export class TableDigest {
  rows = 0;
  private hash: Hash = createHash('sha256');
  constructor(private table: TablePlan, private from: 'sqlite' | 'pg') {}
  add(row: Record<string, unknown>): void {
    this.rows++;
    this.hash.update(this.table.columns.map((c) => canonical(c.kind, row[c.name], this.from)).join('\u001f') + '\u001e');
  }
  digest(): { rows: number; sha256: string } {
    return { rows: this.rows, sha256: this.hash.digest('hex') };
  }
}

/**
 * A value read from SQLite as a parameter for PostgreSQL. JSON stays the text SQLite holds: the
 * INSERT casts it text → jsonb (src/db/copy/read-pages.ts), which parses it on the server.
 */
export function sqliteToPg(kind: ColumnKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (kind === 'boolean') return sqliteBoolean(v);
  if (kind === 'integer') return typeof v === 'bigint' ? v.toString() : v;
  return v;
}

/** A value read from PostgreSQL as SQLite stores it (what drizzle's sqlite columns write). */
export function pgToSqlite(kind: ColumnKind, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (kind === 'boolean') return v === true ? 1 : 0;
  if (kind === 'json') return JSON.stringify(v);
  if (kind === 'integer') {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : BigInt(String(v));
  }
  return v;
}

/**
 * PostgreSQL cannot hold a NUL character in text, nor a \u0000 escape in jsonb; SQLite can. Such
 * a value is named before anything is written, instead of failing the copy on an opaque error.
 */
export function findNul(table: TablePlan, row: Record<string, unknown>): string | undefined {
  for (const c of table.columns) {
    const v = row[c.name];
    if (typeof v !== 'string') continue;
    if (v.includes('\u0000') || (c.kind === 'json' && /\\u0000/i.test(v))) return c.name;
  }
  return undefined;
}
