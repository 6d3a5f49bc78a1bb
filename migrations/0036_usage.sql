CREATE TABLE `usage_days` (
	`user_id` text NOT NULL,
	`day` text NOT NULL,
	`tokens` integer NOT NULL,
	`research_runs` integer NOT NULL,
	`images` integer NOT NULL,
	PRIMARY KEY(`user_id`, `day`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `usage_prices` (
	`model` text PRIMARY KEY NOT NULL,
	`input_micro` integer NOT NULL,
	`output_micro` integer NOT NULL,
	`unit_micro` integer NOT NULL,
	`request_micro` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `usage_records` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`api_key_id` text,
	`connection_id` text,
	`model` text NOT NULL,
	`assistant_id` text,
	`kind` text NOT NULL,
	`input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`cached_tokens` integer NOT NULL,
	`reasoning_tokens` integer NOT NULL,
	`units` integer NOT NULL,
	`credits_micro` integer NOT NULL,
	`estimated` integer NOT NULL,
	`response_id` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`api_key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `usage_records_user_idx` ON `usage_records` (`user_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `usage_records_time_idx` ON `usage_records` (`created_at`);--> statement-breakpoint
CREATE TABLE `usage_reservations` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`tokens` integer NOT NULL,
	`images` integer NOT NULL,
	`credits_micro` integer NOT NULL,
	`paid` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `usage_reservations_user_idx` ON `usage_reservations` (`user_id`,`expires_at`);--> statement-breakpoint
CREATE TABLE `usage_tiers` (
	`name` text PRIMARY KEY NOT NULL,
	`period` text NOT NULL,
	`tokens` integer,
	`research_runs` integer,
	`images` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `credit_ledger` ADD `amount_micro` integer DEFAULT 0 NOT NULL;