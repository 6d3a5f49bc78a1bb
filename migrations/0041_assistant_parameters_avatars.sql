CREATE TABLE `assistant_avatars` (
	`assistant_id` text PRIMARY KEY NOT NULL,
	`webp` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`assistant_id`) REFERENCES `assistants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `assistants` ADD `parameters` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `assistants` ADD `avatar_version` text;