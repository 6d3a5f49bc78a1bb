-- Full-text index of conversation items for the history tool (external content: the text lives
-- once, in conversation_items; triggers keep the index in step, including cascade deletes).
CREATE VIRTUAL TABLE `conversation_items_fts` USING fts5(content, content='conversation_items', content_rowid='rowid');
--> statement-breakpoint
CREATE TRIGGER `conversation_items_fts_insert` AFTER INSERT ON `conversation_items` BEGIN
  INSERT INTO conversation_items_fts(rowid, content) VALUES (new.rowid, new.content);
END;
--> statement-breakpoint
CREATE TRIGGER `conversation_items_fts_delete` AFTER DELETE ON `conversation_items` BEGIN
  INSERT INTO conversation_items_fts(conversation_items_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
--> statement-breakpoint
CREATE TRIGGER `conversation_items_fts_update` AFTER UPDATE OF content ON `conversation_items` BEGIN
  INSERT INTO conversation_items_fts(conversation_items_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
  INSERT INTO conversation_items_fts(rowid, content) VALUES (new.rowid, new.content);
END;
--> statement-breakpoint
INSERT INTO conversation_items_fts(rowid, content) SELECT rowid, content FROM conversation_items;
