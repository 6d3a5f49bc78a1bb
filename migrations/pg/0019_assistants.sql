CREATE TABLE "assistants" (
	"id" text PRIMARY KEY NOT NULL,
	"owner_id" text,
	"visibility" text NOT NULL,
	"tiers" jsonb NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"instructions" text NOT NULL,
	"model" text,
	"tools" jsonb,
	"starters" jsonb NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "assistant_id" text;--> statement-breakpoint
ALTER TABLE "assistants" ADD CONSTRAINT "assistants_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "assistants_owner_idx" ON "assistants" USING btree ("owner_id","name");--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE set null ON UPDATE no action;