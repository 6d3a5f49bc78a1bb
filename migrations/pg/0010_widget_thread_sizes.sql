ALTER TABLE "widget_thread_messages" ADD COLUMN "bytes" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "widget_threads" ADD COLUMN "message_count" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "widget_threads" ADD COLUMN "bytes" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The sizes of the messages stored before: each message's JSON (as jsonb writes it back), and each thread's sums.
UPDATE "widget_thread_messages" SET "bytes" = octet_length("data"::text);--> statement-breakpoint
UPDATE "widget_threads" SET
  "message_count" = (SELECT count(*) FROM "widget_thread_messages" m WHERE m."thread_id" = "widget_threads"."id"),
  "bytes" = (SELECT coalesce(sum(m."bytes"), 0) FROM "widget_thread_messages" m WHERE m."thread_id" = "widget_threads"."id");
