ALTER TABLE `widgets` ADD `origin` text;--> statement-breakpoint
CREATE UNIQUE INDEX `widgets_origin_idx` ON `widgets` (`origin`);