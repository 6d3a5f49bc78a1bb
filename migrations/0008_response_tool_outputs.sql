CREATE TABLE `response_tool_outputs` (
	`response_id` text NOT NULL,
	`upstream_id` text NOT NULL,
	`call_id` text NOT NULL,
	`output` text NOT NULL,
	PRIMARY KEY(`response_id`, `upstream_id`, `call_id`),
	FOREIGN KEY (`response_id`) REFERENCES `responses`(`id`) ON UPDATE no action ON DELETE cascade
);
