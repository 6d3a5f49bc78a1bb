CREATE TABLE `group_answer_authors` (
	`item_id` text PRIMARY KEY NOT NULL,
	`assistant_id` text NOT NULL,
	`name` text NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `conversation_items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `group_chats` ADD `assistant_id` text REFERENCES assistants(id) ON DELETE SET NULL;