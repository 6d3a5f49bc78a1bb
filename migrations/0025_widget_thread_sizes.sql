ALTER TABLE `widget_thread_messages` ADD `bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `widget_threads` ADD `message_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `widget_threads` ADD `bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The sizes of the messages stored before: each message's JSON as stored, and each thread's sums.
UPDATE `widget_thread_messages` SET `bytes` = length(CAST(`data` AS BLOB));--> statement-breakpoint
UPDATE `widget_threads` SET
  `message_count` = (SELECT count(*) FROM `widget_thread_messages` m WHERE m.`thread_id` = `widget_threads`.`id`),
  `bytes` = (SELECT coalesce(sum(m.`bytes`), 0) FROM `widget_thread_messages` m WHERE m.`thread_id` = `widget_threads`.`id`);
