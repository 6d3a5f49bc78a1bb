CREATE TABLE "assistant_avatars" (
	"assistant_id" text PRIMARY KEY NOT NULL,
	"webp" text NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "assistants" ADD COLUMN "parameters" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "assistants" ADD COLUMN "avatar_version" text;--> statement-breakpoint
ALTER TABLE "assistant_avatars" ADD CONSTRAINT "assistant_avatars_assistant_id_assistants_id_fk" FOREIGN KEY ("assistant_id") REFERENCES "public"."assistants"("id") ON DELETE cascade ON UPDATE no action;