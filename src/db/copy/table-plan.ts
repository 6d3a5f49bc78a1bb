import { getTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import * as schema from '../schema';
import { isVectorColumn } from '../vector-column';

/**
 * What a column holds, which decides how its values cross between the two databases. `vector`: an
 * embedding, base64 text in SQLite and bytea in PostgreSQL (src/db/vector-column.ts), read from
 * PostgreSQL as base64 so that both sides give the same text.
 */
export type ColumnKind = 'text' | 'integer' | 'boolean' | 'json' | 'vector';

export interface TablePlan {
  name: string;
  columns: { name: string; kind: ColumnKind }[];
  /** The primary key's columns: the order rows are read, copied and checksummed in. */
  key: string[];
}

const KIND: Record<string, ColumnKind> = { SQLiteText: 'text', SQLiteInteger: 'integer', SQLiteBoolean: 'boolean', SQLiteTextJson: 'json' };

/** drizzle's description of every table of the one schema (src/db/schema/). */
export const tableConfigs = () =>
  Object.values(schema)
    .map((t) => {
      try {
        return getTableConfig(t as SQLiteTable);
      } catch {
        return undefined;
      }
    })
    .filter((c) => c !== undefined);

/**
 * Every table of the one schema (src/db/schema/), parents before the tables whose foreign keys
 * point at them, so rows can be inserted table by table with the keys checked as they arrive.
 * A column type without a kind here is refused, as src/db/pg/from-sqlite.ts refuses it.
 */
export function tablePlan(): TablePlan[] {
  const configs = tableConfigs();
  const byName = new Map(configs.map((c) => [c.name, c]));
  const ordered: TablePlan[] = [];
  const placed = new Set<string>();
  const visit = (name: string, path: string[]) => {
    if (placed.has(name)) return;
    if (path.includes(name)) throw new Error(`foreign keys form a cycle: ${[...path, name].join(' → ')}`);
    const c = byName.get(name)!;
    for (const fk of c.foreignKeys) {
      const parent = getTableConfig(fk.reference().foreignTable).name;
      if (parent !== name) visit(parent, [...path, name]);
    }
    const key = [...c.columns.filter((col) => col.primary).map((col) => col.name), ...c.primaryKeys.flatMap((pk) => pk.columns.map((col) => col.name))];
    if (!key.length) throw new Error(`table ${name} has no primary key: it cannot be copied in a stable order`);
    ordered.push({
      name,
      key,
      columns: c.columns.map((col) => {
        const kind = isVectorColumn(col as never) ? 'vector' : KIND[col.columnType];
        if (!kind) throw new Error(`no copy rule for ${col.columnType} (${name}.${col.name}): add it in src/db/copy/table-plan.ts`);
        return { name: col.name, kind };
      }),
    });
    placed.add(name);
  };
  for (const c of [...configs].sort((a, b) => a.name.localeCompare(b.name))) visit(c.name, []);
  return ordered;
}
