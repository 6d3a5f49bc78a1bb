CREATE TABLE `conversation_branches` (
	`id` text PRIMARY KEY NOT NULL,
	`conversation_id` text NOT NULL,
	`parent_conversation_id` text NOT NULL,
	`parent_item_id` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `conversation_branches_conversation_idx` ON `conversation_branches` (`conversation_id`);--> statement-breakpoint
CREATE INDEX `conversation_branches_parent_idx` ON `conversation_branches` (`parent_conversation_id`);--> statement-breakpoint
CREATE TABLE `response_events` (
	`response_id` text NOT NULL,
	`seq` integer NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`response_id`, `seq`),
	FOREIGN KEY (`response_id`) REFERENCES `responses`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `responses` (
	`id` text PRIMARY KEY NOT NULL,
	`conversation_id` text NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`status` text NOT NULL,
	`model` text DEFAULT '' NOT NULL,
	`input` text NOT NULL,
	`upstream_id` text,
	`upstream_seq` integer,
	`error` text,
	`last_seq` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `responses_conversation_idx` ON `responses` (`conversation_id`);--> statement-breakpoint
CREATE INDEX `responses_status_idx` ON `responses` (`status`);--> statement-breakpoint
CREATE INDEX `responses_finished_idx` ON `responses` (`finished_at`);