import { getTableConfig, type SQLiteColumn, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import { bigint, boolean, foreignKey, index, jsonb, pgTable, primaryKey, text, uniqueIndex, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import { getTableColumns, is, SQL } from 'drizzle-orm';
import { isVectorColumn, pgVectorColumn } from '../vector-column';

/** A column's property name in its table (the schema's `createdAt` for the column `created_at`). */
const keyOf = (c: SQLiteColumn): string => Object.entries(getTableColumns(c.table as SQLiteTable)).find(([, x]) => x === c)![0];

/**
 * The PostgreSQL tables, made from the SQLite schema (src/db/schema/): one source of truth for
 * the tables, their columns, keys and indexes, whichever database runs them. Types map by what
 * the column holds, not by name:
 *
 *   text → text; integer → bigint (milliseconds since the epoch outgrow PostgreSQL's 4-byte
 *   integer in 1970 + 25 days); integer as boolean → boolean; text as JSON → jsonb; an
 *   embedding's vector (base64 text) → bytea (src/db/vector-column.ts).
 *
 * A column type with no mapping here is refused when the schema loads, so a new kind of column
 * cannot reach PostgreSQL unconverted.
 */
export function pgTablesFrom<T extends Record<string, unknown>>(schema: T): Record<string, PgTable> {
  const sqliteTables = Object.entries(schema).filter((e): e is [string, SQLiteTable] => isTable(e[1]));
  const byName = new Map<string, PgTable>();
  const out: Record<string, PgTable> = {};
  for (const [key, table] of sqliteTables) {
    const pg = convertTable(table, byName);
    byName.set(getTableConfig(table).name, pg);
    out[key] = pg;
  }
  return out;
}

const isTable = (v: unknown): boolean => {
  try {
    getTableConfig(v as SQLiteTable);
    return true;
  } catch {
    return false;
  }
};

function convertColumn(c: SQLiteColumn) {
  let b;
  switch (c.columnType) {
    case 'SQLiteText':
      b = text(c.name);
      break;
    case 'SQLiteInteger':
      b = bigint(c.name, { mode: 'number' });
      break;
    case 'SQLiteBoolean':
      b = boolean(c.name);
      break;
    case 'SQLiteTextJson':
      b = jsonb(c.name);
      break;
    case 'SQLiteCustomColumn':
      if (!isVectorColumn(c)) throw new Error(`no PostgreSQL column for the custom column ${c.name}: add its mapping in src/db/pg/from-sqlite.ts`);
      b = pgVectorColumn(c.name);
      break;
    default:
      throw new Error(`no PostgreSQL column for ${c.columnType} (${c.name}): add its mapping in src/db/pg/from-sqlite.ts`);
  }
  if (c.primary) b = b.primaryKey();
  if (c.notNull) b = b.notNull();
  if (c.isUnique) b = b.unique(c.uniqueName);
  if (c.hasDefault && c.default !== undefined) b = b.default(is(c.default, SQL) ? c.default : (c.default as never));
  return b;
}

/** The same table in PostgreSQL; `byName` gives the tables converted so far, for foreign keys (read lazily). */
function convertTable(table: SQLiteTable, byName: Map<string, PgTable>): PgTable {
  const config = getTableConfig(table);
  // Keyed as in the SQLite table (`createdAt`, not `created_at`): a query written once against
  // the schema's property names runs on either table (src/db/work.ts).
  const columns = Object.fromEntries(Object.entries(getTableColumns(table)).map(([key, c]) => [key, convertColumn(c as SQLiteColumn)]));
  return pgTable(config.name, columns, (t) => {
    const col = (c: SQLiteColumn) => (t as unknown as Record<string, PgColumn>)[keyOf(c)]!;
    const foreignCol = (c: SQLiteColumn) => {
      const target = byName.get(getTableConfig(c.table as SQLiteTable).name);
      if (!target) throw new Error(`${config.name}: a foreign key to ${getTableConfig(c.table as SQLiteTable).name}, which is not converted before it`);
      return (target as unknown as Record<string, PgColumn>)[keyOf(c)]!;
    };
    return [
      ...config.primaryKeys.map((pk) => primaryKey({ columns: pk.columns.map(col) as [PgColumn, ...PgColumn[]] })),
      ...config.indexes.map((ix) => {
        const { name, columns, unique, where } = ix.config;
        const made = (unique ? uniqueIndex : index)(name).on(...(columns.map((c) => col(c as SQLiteColumn)) as [PgColumn, ...PgColumn[]]));
        return where ? made.where(where) : made;
      }),
      ...config.foreignKeys.map((fk) => {
        const ref = fk.reference();
        const made = foreignKey({ columns: ref.columns.map(col) as [PgColumn, ...PgColumn[]], foreignColumns: ref.foreignColumns.map(foreignCol) as [PgColumn, ...PgColumn[]] });
        return fk.onDelete ? made.onDelete(fk.onDelete) : made;
      }),
    ];
  });
}
