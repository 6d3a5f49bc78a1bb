CREATE TABLE `group_answer_authors` (
	`item_id` text PRIMARY KEY NOT NULL,
	`assistant_id` text NOT NULL,
	`name` text NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `conversation_items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- ON DELETE SET NULL written by hand: drizzle-kit leaves it out of SQLite's ADD COLUMN (the snapshot has it). Without it, an assistant a group chose could not be deleted.
ALTER TABLE `group_chats` ADD `assistant_id` text REFERENCES assistants(id) ON DELETE SET NULL;