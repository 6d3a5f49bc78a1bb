ALTER TABLE "files" ADD COLUMN "origin" text;--> statement-breakpoint
CREATE UNIQUE INDEX "files_origin_idx" ON "files" USING btree ("origin","filename");