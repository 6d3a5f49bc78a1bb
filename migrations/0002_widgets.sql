CREATE TABLE `widgets` (
	`id` text PRIMARY KEY NOT NULL,
	`conversation_id` text NOT NULL,
	`response_id` text NOT NULL,
	`widget_type` text NOT NULL,
	`title` text DEFAULT '' NOT NULL,
	`document` text DEFAULT '{}' NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `widgets_conversation_idx` ON `widgets` (`conversation_id`);