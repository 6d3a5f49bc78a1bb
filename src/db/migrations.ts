// The SQL migrations, embedded into the binary as text. Drizzle's folder-reading migrator cannot
// read files inside a `bun build --compile` executable, so every file of migrations/ is imported
// here, in order. test/db.test.ts fails when a file of migrations/ is missing from this list.
import m0000 from '../../migrations/0000_foundation.sql' with { type: 'text' };
import m0001 from '../../migrations/0001_conversations.sql' with { type: 'text' };
import m0002 from '../../migrations/0002_widgets.sql' with { type: 'text' };
import m0003 from '../../migrations/0003_extras.sql' with { type: 'text' };
import m0004 from '../../migrations/0004_chat.sql' with { type: 'text' };
import m0005 from '../../migrations/0005_history_fts.sql' with { type: 'text' };
import m0006 from '../../migrations/0006_groups.sql' with { type: 'text' };
import m0007 from '../../migrations/0007_group_conversation_index.sql' with { type: 'text' };
import m0008 from '../../migrations/0008_response_tool_outputs.sql' with { type: 'text' };
import m0009 from '../../migrations/0009_widget_origin.sql' with { type: 'text' };
import m0010 from '../../migrations/0010_finished_tool_outputs.sql' with { type: 'text' };
import m0011 from '../../migrations/0011_group_items_not_in_history.sql' with { type: 'text' };
import m0012 from '../../migrations/0012_conversation_next_position.sql' with { type: 'text' };
import m0013 from '../../migrations/0013_push_token_holder.sql' with { type: 'text' };
import m0014 from '../../migrations/0014_login_links.sql' with { type: 'text' };
import m0015 from '../../migrations/0015_admin_flag.sql' with { type: 'text' };
import m0016 from '../../migrations/0016_responses_by_conversation_time.sql' with { type: 'text' };
import m0017 from '../../migrations/0017_leases.sql' with { type: 'text' };
import m0018 from '../../migrations/0018_rate_buckets.sql' with { type: 'text' };
import m0019 from '../../migrations/0019_files.sql' with { type: 'text' };
import m0020 from '../../migrations/0020_news_miniapps.sql' with { type: 'text' };
import m0021 from '../../migrations/0021_memories.sql' with { type: 'text' };
import m0022 from '../../migrations/0022_feedback.sql' with { type: 'text' };
import m0023 from '../../migrations/0023_support.sql' with { type: 'text' };
import m0024 from '../../migrations/0024_file_embeddings.sql' with { type: 'text' };
import m0025 from '../../migrations/0025_widget_thread_sizes.sql' with { type: 'text' };
import m0026 from '../../migrations/0026_conversation_shares.sql' with { type: 'text' };
import m0027 from '../../migrations/0027_setup_tokens.sql' with { type: 'text' };
import m0028 from '../../migrations/0028_file_vectors_version.sql' with { type: 'text' };
import m0029 from '../../migrations/0029_imported_conversations.sql' with { type: 'text' };
import m0030 from '../../migrations/0030_connections.sql' with { type: 'text' };
import m0031 from '../../migrations/0031_api_responses.sql' with { type: 'text' };
import m0032 from '../../migrations/0032_mcp_servers.sql' with { type: 'text' };
import m0033 from '../../migrations/0033_embedding_codes.sql' with { type: 'text' };
import m0034 from '../../migrations/0034_oauth_grants.sql' with { type: 'text' };
import m0035 from '../../migrations/0035_tool_approvals_assistants.sql' with { type: 'text' };
import m0036 from '../../migrations/0036_usage.sql' with { type: 'text' };
import m0037 from '../../migrations/0037_group_model.sql' with { type: 'text' };
import m0038 from '../../migrations/0038_video_jobs.sql' with { type: 'text' };
import m0039 from '../../migrations/0039_assistant_knowledge_mcp.sql' with { type: 'text' };
import m0040 from '../../migrations/0040_group_assistant.sql' with { type: 'text' };
import m0041 from '../../migrations/0041_assistant_parameters_avatars.sql' with { type: 'text' };
import m0042 from '../../migrations/0042_generated_file_origin.sql' with { type: 'text' };

export interface EmbeddedMigration {
  tag: string;
  sql: string;
}

export const migrations: EmbeddedMigration[] = [
  { tag: '0000_foundation', sql: m0000 },
  { tag: '0001_conversations', sql: m0001 },
  { tag: '0002_widgets', sql: m0002 },
  { tag: '0003_extras', sql: m0003 },
  { tag: '0004_chat', sql: m0004 },
  { tag: '0005_history_fts', sql: m0005 },
  { tag: '0006_groups', sql: m0006 },
  { tag: '0007_group_conversation_index', sql: m0007 },
  { tag: '0008_response_tool_outputs', sql: m0008 },
  { tag: '0009_widget_origin', sql: m0009 },
  { tag: '0010_finished_tool_outputs', sql: m0010 },
  { tag: '0011_group_items_not_in_history', sql: m0011 },
  { tag: '0012_conversation_next_position', sql: m0012 },
  { tag: '0013_push_token_holder', sql: m0013 },
  { tag: '0014_login_links', sql: m0014 },
  { tag: '0015_admin_flag', sql: m0015 },
  { tag: '0016_responses_by_conversation_time', sql: m0016 },
  { tag: '0017_leases', sql: m0017 },
  { tag: '0018_rate_buckets', sql: m0018 },
  { tag: '0019_files', sql: m0019 },
  { tag: '0020_news_miniapps', sql: m0020 },
  { tag: '0021_memories', sql: m0021 },
  { tag: '0022_feedback', sql: m0022 },
  { tag: '0023_support', sql: m0023 },
  { tag: '0024_file_embeddings', sql: m0024 },
  { tag: '0025_widget_thread_sizes', sql: m0025 },
  { tag: '0026_conversation_shares', sql: m0026 },
  { tag: '0027_setup_tokens', sql: m0027 },
  { tag: '0028_file_vectors_version', sql: m0028 },
  { tag: '0029_imported_conversations', sql: m0029 },
  { tag: '0030_connections', sql: m0030 },
  { tag: '0031_api_responses', sql: m0031 },
  { tag: '0032_mcp_servers', sql: m0032 },
  { tag: '0033_embedding_codes', sql: m0033 },
  { tag: '0034_oauth_grants', sql: m0034 },
  { tag: '0035_tool_approvals_assistants', sql: m0035 },
  { tag: '0036_usage', sql: m0036 },
  { tag: '0037_group_model', sql: m0037 },
  { tag: '0038_video_jobs', sql: m0038 },
  { tag: '0039_assistant_knowledge_mcp', sql: m0039 },
  { tag: '0040_group_assistant', sql: m0040 },
  { tag: '0041_assistant_parameters_avatars', sql: m0041 },
  { tag: '0042_generated_file_origin', sql: m0042 },
];
