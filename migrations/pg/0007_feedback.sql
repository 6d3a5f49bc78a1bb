CREATE TABLE "answer_feedback" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"item_id" text NOT NULL,
	"rating" text NOT NULL,
	"reasons" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"comment" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "answer_feedback" ADD CONSTRAINT "answer_feedback_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "answer_feedback" ADD CONSTRAINT "answer_feedback_item_id_conversation_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "public"."conversation_items"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "answer_feedback_user_item_idx" ON "answer_feedback" USING btree ("user_id","item_id");--> statement-breakpoint
CREATE INDEX "answer_feedback_item_idx" ON "answer_feedback" USING btree ("item_id");--> statement-breakpoint
CREATE INDEX "answer_feedback_updated_idx" ON "answer_feedback" USING btree ("updated_at","id");