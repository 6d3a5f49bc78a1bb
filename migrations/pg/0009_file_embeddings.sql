ALTER TABLE "file_chunks" ADD COLUMN "embedding_model" text;--> statement-breakpoint
CREATE INDEX "file_chunks_embedding_model_idx" ON "file_chunks" USING btree ("embedding_model");