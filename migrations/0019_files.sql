CREATE TABLE `file_attachments` (
	`file_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`file_id`, `conversation_id`),
	FOREIGN KEY (`file_id`) REFERENCES `files`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `file_attachments_conversation_idx` ON `file_attachments` (`conversation_id`);--> statement-breakpoint
CREATE TABLE `file_blobs` (
	`sha256` text PRIMARY KEY NOT NULL,
	`size` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `file_chunks` (
	`id` text PRIMARY KEY NOT NULL,
	`file_id` text NOT NULL,
	`seq` integer NOT NULL,
	`page` integer,
	`start_char` integer NOT NULL,
	`content` text NOT NULL,
	`embedding` text,
	FOREIGN KEY (`file_id`) REFERENCES `files`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `file_chunks_file_seq_idx` ON `file_chunks` (`file_id`,`seq`);--> statement-breakpoint
CREATE TABLE `files` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`sha256` text NOT NULL,
	`filename` text NOT NULL,
	`mime_type` text NOT NULL,
	`kind` text NOT NULL,
	`size` integer NOT NULL,
	`width` integer,
	`height` integer,
	`thumb_sha256` text,
	`source` text DEFAULT 'upload' NOT NULL,
	`text_status` text DEFAULT 'none' NOT NULL,
	`text_error` text,
	`text_chars` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`sha256`) REFERENCES `file_blobs`(`sha256`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`thumb_sha256`) REFERENCES `file_blobs`(`sha256`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `files_user_idx` ON `files` (`user_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `files_sha256_idx` ON `files` (`sha256`);--> statement-breakpoint
CREATE INDEX `files_text_status_idx` ON `files` (`text_status`);
--> statement-breakpoint
-- Full-text index of document chunks for the file search tool (external content, as
-- conversation_items_fts in 0005: the text lives once; triggers keep the index in step,
-- cascade deletes included).
CREATE VIRTUAL TABLE `file_chunks_fts` USING fts5(content, content='file_chunks', content_rowid='rowid');
--> statement-breakpoint
CREATE TRIGGER `file_chunks_fts_insert` AFTER INSERT ON `file_chunks` BEGIN
  INSERT INTO file_chunks_fts(rowid, content) VALUES (new.rowid, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER `file_chunks_fts_delete` AFTER DELETE ON `file_chunks` BEGIN
  INSERT INTO file_chunks_fts(file_chunks_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
