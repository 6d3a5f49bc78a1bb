ALTER TABLE `file_chunks` ADD `embedding_model` text;--> statement-breakpoint
CREATE INDEX `file_chunks_embedding_model_idx` ON `file_chunks` (`embedding_model`);