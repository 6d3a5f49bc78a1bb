CREATE TABLE `connections` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`kind` text NOT NULL,
	`api` text NOT NULL,
	`base_url` text NOT NULL,
	`credential` text,
	`options` text NOT NULL,
	`enabled` integer NOT NULL,
	`source` text NOT NULL,
	`allow_private` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`version` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `connections_name_unique` ON `connections` (`name`);--> statement-breakpoint
CREATE INDEX `connections_kind_idx` ON `connections` (`kind`);--> statement-breakpoint
CREATE TABLE `model_settings` (
	`connection_id` text NOT NULL,
	`model` text NOT NULL,
	`display_name` text,
	`hidden` integer NOT NULL,
	`position` integer,
	`vision` integer,
	`tools` integer,
	`thinking` integer,
	`context_tokens` integer,
	`tiers` text,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`connection_id`, `model`),
	FOREIGN KEY (`connection_id`) REFERENCES `connections`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `server_settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
