ALTER TABLE `push_tokens` ADD `session_id` text;--> statement-breakpoint
ALTER TABLE `push_tokens` ADD `api_key_id` text;