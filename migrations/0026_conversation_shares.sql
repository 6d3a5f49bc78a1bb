CREATE TABLE `conversation_shares` (
	`id` text PRIMARY KEY NOT NULL,
	`conversation_id` text NOT NULL,
	`sharer_id` text NOT NULL,
	`email` text NOT NULL,
	`recipient_id` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`sharer_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`recipient_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `conversation_shares_offer_idx` ON `conversation_shares` (`conversation_id`,`email`);--> statement-breakpoint
CREATE INDEX `conversation_shares_recipient_idx` ON `conversation_shares` (`recipient_id`,`status`);--> statement-breakpoint
CREATE INDEX `conversation_shares_sharer_idx` ON `conversation_shares` (`sharer_id`,`created_at`);