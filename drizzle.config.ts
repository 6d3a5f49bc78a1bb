import { defineConfig } from 'drizzle-kit';

// Dev tooling only: `bunx drizzle-kit generate --name <change>` writes the next SQL migration into
// migrations/. The binary applies them itself (src/db/migrate.ts); add the new file to
// src/db/migrations.ts (a test fails if you forget).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema/index.ts',
  out: './migrations',
});
