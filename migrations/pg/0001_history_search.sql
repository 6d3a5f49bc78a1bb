-- The history tool's full-text search (SQLite: the FTS5 table of migrations 0005 and 0011). Only
-- searchable items are indexed (a group chat's messages are no one's own history). A generated
-- column keeps the index in step with every insert, update and cascade delete, without triggers;
-- 'simple' (no stemming, no stop words) matches words as SQLite's default tokenizer does.
ALTER TABLE "conversation_items" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (CASE WHEN "searchable" THEN to_tsvector('simple', "content") END) STORED;
--> statement-breakpoint
CREATE INDEX "conversation_items_search_idx" ON "conversation_items" USING gin ("search");
