CREATE TABLE `video_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`response_id` text NOT NULL,
	`call_key` text NOT NULL,
	`user_id` text NOT NULL,
	`connection_id` text NOT NULL,
	`upstream_id` text NOT NULL,
	`model` text NOT NULL,
	`status` text NOT NULL,
	`file_id` text,
	`error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`response_id`) REFERENCES `responses`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `video_jobs_call_idx` ON `video_jobs` (`response_id`,`call_key`);