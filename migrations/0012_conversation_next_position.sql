ALTER TABLE `conversations` ADD `next_position` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- One past each conversation's last item, so appending reads a column instead of max(position).
UPDATE `conversations` SET `next_position` = coalesce((SELECT max(`position`) + 1 FROM `conversation_items` WHERE `conversation_id` = `conversations`.`id`), 0);
