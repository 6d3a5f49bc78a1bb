CREATE TABLE `embedding_models` (
	`model` text PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL,
	`probe` text NOT NULL,
	`since` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `file_chunks` ADD `embedding_code` text;--> statement-breakpoint
CREATE INDEX `file_chunks_codes_idx` ON `file_chunks` (`file_id`,`embedding_model`,`seq`,`embedding_code`);--> statement-breakpoint
CREATE INDEX `file_chunks_uncoded_idx` ON `file_chunks` (`file_id`) WHERE "file_chunks"."embedding" IS NOT NULL AND "file_chunks"."embedding_code" IS NULL;