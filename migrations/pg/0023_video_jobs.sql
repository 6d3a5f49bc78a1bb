CREATE TABLE "video_jobs" (
	"id" text PRIMARY KEY NOT NULL,
	"response_id" text NOT NULL,
	"call_key" text NOT NULL,
	"user_id" text NOT NULL,
	"connection_id" text NOT NULL,
	"upstream_id" text NOT NULL,
	"model" text NOT NULL,
	"status" text NOT NULL,
	"file_id" text,
	"error" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "video_jobs" ADD CONSTRAINT "video_jobs_response_id_responses_id_fk" FOREIGN KEY ("response_id") REFERENCES "public"."responses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "video_jobs" ADD CONSTRAINT "video_jobs_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "video_jobs_call_idx" ON "video_jobs" USING btree ("response_id","call_key");