DROP INDEX `responses_conversation_idx`;--> statement-breakpoint
CREATE INDEX `responses_conversation_idx` ON `responses` (`conversation_id`,`created_at`,`id`);