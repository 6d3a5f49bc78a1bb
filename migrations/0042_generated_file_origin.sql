ALTER TABLE `files` ADD `origin` text;--> statement-breakpoint
CREATE UNIQUE INDEX `files_origin_idx` ON `files` (`origin`,`filename`);