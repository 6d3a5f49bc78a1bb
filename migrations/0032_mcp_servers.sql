CREATE TABLE `mcp_servers` (
	`id` text PRIMARY KEY NOT NULL,
	`owner_id` text,
	`name` text NOT NULL,
	`transport` text NOT NULL,
	`url` text,
	`command` text,
	`secrets` text,
	`auth` text NOT NULL,
	`oauth_client_id` text,
	`oauth_client` text,
	`approval` text NOT NULL,
	`timeout_s` integer,
	`enabled` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`version` integer NOT NULL,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mcp_servers_owner_name_idx` ON `mcp_servers` (`owner_id`,`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `mcp_servers_admin_name_idx` ON `mcp_servers` (`name`) WHERE "mcp_servers"."owner_id" IS NULL;--> statement-breakpoint
CREATE TABLE `mcp_tokens` (
	`server_id` text NOT NULL,
	`user_id` text NOT NULL,
	`tokens` text,
	`expires_at` integer,
	`flow_state` text,
	`flow` text,
	`flow_expires_at` integer,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`server_id`, `user_id`),
	FOREIGN KEY (`server_id`) REFERENCES `mcp_servers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mcp_tokens_flow_state_idx` ON `mcp_tokens` (`flow_state`);