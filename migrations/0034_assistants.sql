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