ALTER TABLE `conversation_items` ADD `searchable` integer DEFAULT true NOT NULL;--> statement-breakpoint
-- A group chat's messages are not anyone's own history: they leave the index search_history reads,
-- and the triggers index, and un-index, only searchable items. ('delete' must name exactly what
-- was indexed, so the group items go before they are marked.)
INSERT INTO `conversation_items_fts`(`conversation_items_fts`, rowid, content)
  SELECT 'delete', rowid, content FROM `conversation_items` WHERE `conversation_id` IN (SELECT `conversation_id` FROM `group_chats`);
--> statement-breakpoint
UPDATE `conversation_items` SET `searchable` = 0 WHERE `conversation_id` IN (SELECT `conversation_id` FROM `group_chats`);
--> statement-breakpoint
DROP TRIGGER `conversation_items_fts_insert`;
--> statement-breakpoint
DROP TRIGGER `conversation_items_fts_delete`;
--> statement-breakpoint
DROP TRIGGER `conversation_items_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `conversation_items_fts_insert` AFTER INSERT ON `conversation_items` WHEN new.searchable BEGIN
  INSERT INTO conversation_items_fts(rowid, content) VALUES (new.rowid, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER `conversation_items_fts_delete` AFTER DELETE ON `conversation_items` WHEN old.searchable BEGIN
  INSERT INTO conversation_items_fts(conversation_items_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
--> statement-breakpoint
CREATE TRIGGER `conversation_items_fts_update` AFTER UPDATE OF content ON `conversation_items` WHEN old.searchable BEGIN
  INSERT INTO conversation_items_fts(conversation_items_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
  INSERT INTO conversation_items_fts(rowid, content) VALUES (new.rowid, new.content);
END;
