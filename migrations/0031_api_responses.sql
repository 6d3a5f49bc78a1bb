CREATE TABLE `api_response_events` (
	`response_id` text NOT NULL,
	`seq` integer NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`response_id`, `seq`),
	FOREIGN KEY (`response_id`) REFERENCES `api_responses`(`id`) ON UPDATE no action ON DELETE cascade
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `api_responses` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`conversation_id` text,
	`status` text NOT NULL,
	`background` integer NOT NULL,
	`model` text NOT NULL,
	`body` text NOT NULL,
	`last_seq` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `api_responses_status_idx` ON `api_responses` (`status`);--> statement-breakpoint
CREATE INDEX `api_responses_finished_idx` ON `api_responses` (`finished_at`);