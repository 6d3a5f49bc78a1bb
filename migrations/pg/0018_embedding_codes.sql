CREATE TABLE "embedding_models" (
	"model" text PRIMARY KEY NOT NULL,
	"generation" bigint NOT NULL,
	"probe" text NOT NULL,
	"since" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "file_chunks" ADD COLUMN "embedding_code" text;--> statement-breakpoint
CREATE INDEX "file_chunks_codes_idx" ON "file_chunks" USING btree ("file_id","embedding_model","seq","embedding_code");--> statement-breakpoint
CREATE INDEX "file_chunks_uncoded_idx" ON "file_chunks" USING btree ("file_id") WHERE "file_chunks"."embedding" IS NOT NULL AND "file_chunks"."embedding_code" IS NULL;