ALTER TABLE `assistants` ADD `knowledge_file_ids` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `assistants` ADD `mcp_server_ids` text;