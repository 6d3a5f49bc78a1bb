import { defineConfig } from 'drizzle-kit';

// Dev tooling only, the PostgreSQL twin of drizzle.config.ts: after a schema change in
// src/db/schema/, `bunx drizzle-kit generate --config drizzle.pg.config.ts --name <change>` writes
// the PostgreSQL migration from the same tables (src/db/pg/schema.ts converts them).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/pg/schema.ts',
  out: './migrations/pg',
});
