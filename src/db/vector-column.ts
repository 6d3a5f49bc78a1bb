import { customType as sqliteCustomType, type SQLiteColumn } from 'drizzle-orm/sqlite-core';
import { customType as pgCustomType } from 'drizzle-orm/pg-core';

/**
 * An embedding's float32 bytes, held as each database reads them fastest (docs/files.md, "How a
 * search reads the vectors"). The application sees base64 on both, as it always has.
 *
 * - SQLite: base64 text (a vector of 1,536 floats spills into overflow pages whether as text or
 *   as a blob, and decoding 100 candidates' base64 is a fraction of a millisecond).
 * - PostgreSQL: `bytea`, kept in the row (migrations/pg/0025_vectors_in_row.sql: storage MAIN,
 *   `toast_tuple_target` raised). Base64 text of 8,192 bytes was moved out of line to the TOAST
 *   table, so each candidate read back cost an index look-up and ~5 chunks there; 6,144 raw bytes
 *   fit the row beside its text.
 *
 * A raw statement (src/files/embeddings.store.ts, `readChunkVectors`) gets the database's own
 * value, a Buffer on PostgreSQL: `createDecoder` takes both.
 */
const passThrough = (v: string) => v;
export const vectorColumn = sqliteCustomType<{ data: string; driverData: string }>({ dataType: () => 'text', fromDriver: passThrough });

export const isVectorColumn = (c: SQLiteColumn): boolean => c.columnType === 'SQLiteCustomColumn' && (c as unknown as { mapFrom?: unknown }).mapFrom === passThrough;

export const pgVectorColumn = pgCustomType<{ data: string; driverData: Uint8Array | string }>({
  dataType: () => 'bytea',
  toDriver: (base64) => Buffer.from(base64, 'base64'),
  // A string: the column not migrated yet (a bench comparing the two layouts), or a raw value.
  fromDriver: (v) => (typeof v === 'string' ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')),
});
