ALTER TABLE "assistants" ADD COLUMN "knowledge_file_ids" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "assistants" ADD COLUMN "mcp_server_ids" jsonb;