// The PostgreSQL migrations, embedded into the binary as text like the SQLite ones
// (src/db/migrations.ts): drizzle-kit writes them from the same schema (drizzle.pg.config.ts)
// into migrations/pg/, and hand-written ones (--custom) hold what drizzle cannot say (full-text
// search). test/pg-schema.test.ts fails when a file of migrations/pg/ is missing from this list.
import type { EmbeddedMigration } from '../migrations';
import p0000 from '../../../migrations/pg/0000_foundation.sql' with { type: 'text' };
import p0001 from '../../../migrations/pg/0001_history_search.sql' with { type: 'text' };
import p0002 from '../../../migrations/pg/0002_leases.sql' with { type: 'text' };
import p0003 from '../../../migrations/pg/0003_rate_buckets.sql' with { type: 'text' };
import p0004 from '../../../migrations/pg/0004_files.sql' with { type: 'text' };
import p0005 from '../../../migrations/pg/0005_news_miniapps.sql' with { type: 'text' };
import p0006 from '../../../migrations/pg/0006_memories.sql' with { type: 'text' };
import p0007 from '../../../migrations/pg/0007_feedback.sql' with { type: 'text' };
import p0008 from '../../../migrations/pg/0008_support.sql' with { type: 'text' };
import p0009 from '../../../migrations/pg/0009_file_embeddings.sql' with { type: 'text' };
import p0010 from '../../../migrations/pg/0010_widget_thread_sizes.sql' with { type: 'text' };
import p0011 from '../../../migrations/pg/0011_conversation_shares.sql' with { type: 'text' };
import p0012 from '../../../migrations/pg/0012_setup_tokens.sql' with { type: 'text' };
import p0013 from '../../../migrations/pg/0013_file_vectors_version.sql' with { type: 'text' };
import p0014 from '../../../migrations/pg/0014_imported_conversations.sql' with { type: 'text' };
import p0015 from '../../../migrations/pg/0015_connections.sql' with { type: 'text' };
import p0016 from '../../../migrations/pg/0016_api_responses.sql' with { type: 'text' };
import p0017 from '../../../migrations/pg/0017_mcp_servers.sql' with { type: 'text' };
import p0018 from '../../../migrations/pg/0018_embedding_codes.sql' with { type: 'text' };
import p0019 from '../../../migrations/pg/0019_oauth_grants.sql' with { type: 'text' };
import p0020 from '../../../migrations/pg/0020_tool_approvals_assistants.sql' with { type: 'text' };
import p0021 from '../../../migrations/pg/0021_usage.sql' with { type: 'text' };
import p0022 from '../../../migrations/pg/0022_group_model.sql' with { type: 'text' };
import p0023 from '../../../migrations/pg/0023_video_jobs.sql' with { type: 'text' };
import p0024 from '../../../migrations/pg/0024_assistant_knowledge_mcp.sql' with { type: 'text' };
import p0025 from '../../../migrations/pg/0025_vectors_in_row.sql' with { type: 'text' };
import p0026 from '../../../migrations/pg/0026_group_assistant.sql' with { type: 'text' };
import p0027 from '../../../migrations/pg/0027_assistant_parameters_avatars.sql' with { type: 'text' };
import p0028 from '../../../migrations/pg/0028_generated_file_origin.sql' with { type: 'text' };

export const pgMigrations: EmbeddedMigration[] = [
  { tag: '0000_foundation', sql: p0000 },
  { tag: '0001_history_search', sql: p0001 },
  { tag: '0002_leases', sql: p0002 },
  { tag: '0003_rate_buckets', sql: p0003 },
  { tag: '0004_files', sql: p0004 },
  { tag: '0005_news_miniapps', sql: p0005 },
  { tag: '0006_memories', sql: p0006 },
  { tag: '0007_feedback', sql: p0007 },
  { tag: '0008_support', sql: p0008 },
  { tag: '0009_file_embeddings', sql: p0009 },
  { tag: '0010_widget_thread_sizes', sql: p0010 },
  { tag: '0011_conversation_shares', sql: p0011 },
  { tag: '0012_setup_tokens', sql: p0012 },
  { tag: '0013_file_vectors_version', sql: p0013 },
  { tag: '0014_imported_conversations', sql: p0014 },
  { tag: '0015_connections', sql: p0015 },
  { tag: '0016_api_responses', sql: p0016 },
  { tag: '0017_mcp_servers', sql: p0017 },
  { tag: '0018_embedding_codes', sql: p0018 },
  { tag: '0019_oauth_grants', sql: p0019 },
  { tag: '0020_tool_approvals_assistants', sql: p0020 },
  { tag: '0021_usage', sql: p0021 },
  { tag: '0022_group_model', sql: p0022 },
  { tag: '0023_video_jobs', sql: p0023 },
  { tag: '0024_assistant_knowledge_mcp', sql: p0024 },
  { tag: '0025_vectors_in_row', sql: p0025 },
  { tag: '0026_group_assistant', sql: p0026 },
  { tag: '0027_assistant_parameters_avatars', sql: p0027 },
  { tag: '0028_generated_file_origin', sql: p0028 },
];

/** A migration's statements, split where drizzle-kit marks them. */
export const statementsOf = (m: EmbeddedMigration): string[] =>
  m.sql
    .split('--> statement-breakpoint')
    .map((s) => s.trim())
    .filter(Boolean);
