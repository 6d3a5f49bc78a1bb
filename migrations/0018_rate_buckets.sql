CREATE TABLE `rate_buckets` (
	`key` text PRIMARY KEY NOT NULL,
	`milli_tokens` integer NOT NULL,
	`at` integer NOT NULL
);
