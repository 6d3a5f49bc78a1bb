CREATE TABLE "api_response_events" (
	"response_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"data" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "api_response_events_response_id_seq_pk" PRIMARY KEY("response_id","seq")
);
--> statement-breakpoint
CREATE TABLE "api_responses" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"conversation_id" text,
	"status" text NOT NULL,
	"background" boolean NOT NULL,
	"model" text NOT NULL,
	"body" jsonb NOT NULL,
	"last_seq" bigint DEFAULT 0 NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"finished_at" bigint
);
--> statement-breakpoint
ALTER TABLE "api_response_events" ADD CONSTRAINT "api_response_events_response_id_api_responses_id_fk" FOREIGN KEY ("response_id") REFERENCES "public"."api_responses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_responses" ADD CONSTRAINT "api_responses_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_responses" ADD CONSTRAINT "api_responses_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_responses_status_idx" ON "api_responses" USING btree ("status");--> statement-breakpoint
CREATE INDEX "api_responses_finished_idx" ON "api_responses" USING btree ("finished_at");