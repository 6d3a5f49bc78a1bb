CREATE TABLE `embedding_models` (
	`model` text PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL,
	`probe` text NOT NULL,
	`since` integer NOT NULL
);
