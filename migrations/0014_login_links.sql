CREATE TABLE `login_links` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `login_links_hash_unique` ON `login_links` (`hash`);--> statement-breakpoint
CREATE INDEX `login_links_user_idx` ON `login_links` (`user_id`);