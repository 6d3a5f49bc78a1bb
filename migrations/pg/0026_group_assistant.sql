CREATE TABLE "group_answer_authors" (
	"item_id" text PRIMARY KEY NOT NULL,
	"assistant_id" text NOT NULL,
	"name" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "group_chats" ADD COLUMN "assistant_id" text;--> statement-breakpoint
ALTER TABLE "group_answer_authors" ADD CONSTRAINT "group_answer_authors_item_id_conversation_items_id_fk" FOREIGN KEY ("item_id") REFERENCES "public"."conversation_items"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "group_chats" ADD CONSTRAINT "group_chats_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE set null ON UPDATE no action;