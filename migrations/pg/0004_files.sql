CREATE TABLE "file_attachments" (
	"file_id" text NOT NULL,
	"conversation_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "file_attachments_file_id_conversation_id_pk" PRIMARY KEY("file_id","conversation_id")
);
--> statement-breakpoint
CREATE TABLE "file_blobs" (
	"sha256" text PRIMARY KEY NOT NULL,
	"size" bigint NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "file_chunks" (
	"id" text PRIMARY KEY NOT NULL,
	"file_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"page" bigint,
	"start_char" bigint NOT NULL,
	"content" text NOT NULL,
	"embedding" text
);
--> statement-breakpoint
CREATE TABLE "files" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"sha256" text NOT NULL,
	"filename" text NOT NULL,
	"mime_type" text NOT NULL,
	"kind" text NOT NULL,
	"size" bigint NOT NULL,
	"width" bigint,
	"height" bigint,
	"thumb_sha256" text,
	"source" text DEFAULT 'upload' NOT NULL,
	"text_status" text DEFAULT 'none' NOT NULL,
	"text_error" text,
	"text_chars" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "file_attachments" ADD CONSTRAINT "file_attachments_file_id_files_id_fk" FOREIGN KEY ("file_id") REFERENCES "public"."files"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "file_attachments" ADD CONSTRAINT "file_attachments_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "file_chunks" ADD CONSTRAINT "file_chunks_file_id_files_id_fk" FOREIGN KEY ("file_id") REFERENCES "public"."files"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_sha256_file_blobs_sha256_fk" FOREIGN KEY ("sha256") REFERENCES "public"."file_blobs"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "files" ADD CONSTRAINT "files_thumb_sha256_file_blobs_sha256_fk" FOREIGN KEY ("thumb_sha256") REFERENCES "public"."file_blobs"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "file_attachments_conversation_idx" ON "file_attachments" USING btree ("conversation_id");--> statement-breakpoint
CREATE UNIQUE INDEX "file_chunks_file_seq_idx" ON "file_chunks" USING btree ("file_id","seq");--> statement-breakpoint
CREATE INDEX "files_user_idx" ON "files" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "files_sha256_idx" ON "files" USING btree ("sha256");--> statement-breakpoint
CREATE INDEX "files_text_status_idx" ON "files" USING btree ("text_status");
--> statement-breakpoint
-- The file search tool's full-text index (SQLite: file_chunks_fts of 0019), as for history search
-- in 0001: a generated column kept in step without triggers; 'simple' matches words as SQLite's
-- default tokenizer does.
ALTER TABLE "file_chunks" ADD COLUMN "search" tsvector GENERATED ALWAYS AS (to_tsvector('simple', "content")) STORED;
--> statement-breakpoint
CREATE INDEX "file_chunks_search_idx" ON "file_chunks" USING gin ("search");
