CREATE TABLE `answer_feedback` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`item_id` text NOT NULL,
	`rating` text NOT NULL,
	`reasons` text DEFAULT '[]' NOT NULL,
	`comment` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`item_id`) REFERENCES `conversation_items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `answer_feedback_user_item_idx` ON `answer_feedback` (`user_id`,`item_id`);--> statement-breakpoint
CREATE INDEX `answer_feedback_item_idx` ON `answer_feedback` (`item_id`);--> statement-breakpoint
CREATE INDEX `answer_feedback_updated_idx` ON `answer_feedback` (`updated_at`,`id`);