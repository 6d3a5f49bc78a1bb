CREATE TABLE `conversation_tool_rules` (
	`conversation_id` text NOT NULL,
	`user_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`decision` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`conversation_id`, `user_id`, `tool_name`),
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `tool_approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`response_id` text NOT NULL,
	`item_id` text NOT NULL,
	`call_key` text NOT NULL,
	`tool_name` text NOT NULL,
	`source` text NOT NULL,
	`arguments` text NOT NULL,
	`status` text NOT NULL,
	`decided_by` text,
	`announced` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`decided_at` integer,
	FOREIGN KEY (`response_id`) REFERENCES `responses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tool_approvals_call_idx` ON `tool_approvals` (`response_id`,`call_key`);--> statement-breakpoint
CREATE INDEX `tool_approvals_item_idx` ON `tool_approvals` (`response_id`,`item_id`);--> statement-breakpoint
CREATE TABLE `assistants` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_id` text,
	`visibility` text NOT NULL,
	`tiers` text NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`instructions` text NOT NULL,
	`model` text,
	`tools` text,
	`starters` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `assistants_owner_idx` ON `assistants` (`owner_id`,`name`);--> statement-breakpoint
ALTER TABLE `conversations` ADD `assistant_id` text REFERENCES assistants(id) ON DELETE set null;