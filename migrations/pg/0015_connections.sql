CREATE TABLE "connections" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"api" text NOT NULL,
	"base_url" text NOT NULL,
	"credential" text,
	"options" jsonb NOT NULL,
	"enabled" boolean NOT NULL,
	"source" text NOT NULL,
	"allow_private" boolean NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"version" bigint NOT NULL,
	CONSTRAINT "connections_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "model_settings" (
	"connection_id" text NOT NULL,
	"model" text NOT NULL,
	"display_name" text,
	"hidden" boolean NOT NULL,
	"position" bigint,
	"vision" boolean,
	"tools" boolean,
	"thinking" boolean,
	"context_tokens" bigint,
	"tiers" jsonb,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "model_settings_connection_id_model_pk" PRIMARY KEY("connection_id","model")
);
--> statement-breakpoint
CREATE TABLE "server_settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" jsonb NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "model_settings" ADD CONSTRAINT "model_settings_connection_id_connections_id_fk" FOREIGN KEY ("connection_id") REFERENCES "public"."connections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "connections_kind_idx" ON "connections" USING btree ("kind");