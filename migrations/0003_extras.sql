CREATE TABLE `widget_thread_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`thread_id` text NOT NULL,
	`seq` integer NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`thread_id`) REFERENCES `widget_threads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `widget_thread_messages_seq_idx` ON `widget_thread_messages` (`thread_id`,`seq`);--> statement-breakpoint
CREATE TABLE `widget_threads` (
	`id` text PRIMARY KEY NOT NULL,
	`widget_id` text NOT NULL,
	`user_id` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`widget_id`) REFERENCES `widgets`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `widget_threads_active_idx` ON `widget_threads` (`widget_id`,`user_id`) WHERE "widget_threads"."status" = 'active';--> statement-breakpoint
CREATE INDEX `widget_threads_user_idx` ON `widget_threads` (`user_id`);--> statement-breakpoint
CREATE TABLE `bookmark_groups` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `bookmark_groups_user_idx` ON `bookmark_groups` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `bookmark_items` (
	`id` text PRIMARY KEY NOT NULL,
	`group_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`item_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`group_id`) REFERENCES `bookmark_groups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`item_id`) REFERENCES `conversation_items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `bookmark_items_group_idx` ON `bookmark_items` (`group_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `bookmark_items_conversation_idx` ON `bookmark_items` (`conversation_id`);--> statement-breakpoint
CREATE INDEX `bookmark_items_item_idx` ON `bookmark_items` (`item_id`);--> statement-breakpoint
CREATE TABLE `credit_ledger` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`amount` integer NOT NULL,
	`reason` text NOT NULL,
	`ad_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `credit_ledger_user_idx` ON `credit_ledger` (`user_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `credit_ledger_ad_idx` ON `credit_ledger` (`user_id`,`ad_id`) WHERE "credit_ledger"."ad_id" IS NOT NULL;--> statement-breakpoint
CREATE TABLE `push_tokens` (
	`token` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`platform` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `push_tokens_user_idx` ON `push_tokens` (`user_id`);