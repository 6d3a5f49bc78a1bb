CREATE TABLE "mini_apps" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"name_key" text NOT NULL,
	"url" text NOT NULL,
	"icon_url" text,
	"description" text,
	"position" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "news_posts" (
	"id" text PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "news_reads" (
	"user_id" text NOT NULL,
	"post_id" text NOT NULL,
	"read_at" bigint NOT NULL,
	CONSTRAINT "news_reads_user_id_post_id_pk" PRIMARY KEY("user_id","post_id")
);
--> statement-breakpoint
ALTER TABLE "news_reads" ADD CONSTRAINT "news_reads_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "news_reads" ADD CONSTRAINT "news_reads_post_id_news_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."news_posts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mini_apps_name_key_idx" ON "mini_apps" USING btree ("name_key");--> statement-breakpoint
CREATE INDEX "mini_apps_position_idx" ON "mini_apps" USING btree ("position","name");--> statement-breakpoint
CREATE INDEX "news_reads_post_idx" ON "news_reads" USING btree ("post_id");