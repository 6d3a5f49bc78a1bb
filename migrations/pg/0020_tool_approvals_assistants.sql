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
CREATE TABLE "conversation_tool_rules" (
	"conversation_id" text NOT NULL,
	"user_id" text NOT NULL,
	"tool_name" text NOT NULL,
	"decision" text NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "conversation_tool_rules_conversation_id_user_id_tool_name_pk" PRIMARY KEY("conversation_id","user_id","tool_name")
);
--> statement-breakpoint
CREATE TABLE "tool_approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"response_id" text NOT NULL,
	"item_id" text NOT NULL,
	"call_key" text NOT NULL,
	"tool_name" text NOT NULL,
	"source" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"status" text NOT NULL,
	"decided_by" text,
	"announced" boolean NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"decided_at" bigint
);
--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "assistant_id" text;--> statement-breakpoint
ALTER TABLE "assistants" ADD CONSTRAINT "assistants_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_tool_rules" ADD CONSTRAINT "conversation_tool_rules_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversation_tool_rules" ADD CONSTRAINT "conversation_tool_rules_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tool_approvals" ADD CONSTRAINT "tool_approvals_response_id_responses_id_fk" FOREIGN KEY ("response_id") REFERENCES "public"."responses"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "assistants_owner_idx" ON "assistants" USING btree ("owner_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "tool_approvals_call_idx" ON "tool_approvals" USING btree ("response_id","call_key");--> statement-breakpoint
CREATE INDEX "tool_approvals_item_idx" ON "tool_approvals" USING btree ("response_id","item_id");--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE set null ON UPDATE no action;