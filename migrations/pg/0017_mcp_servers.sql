CREATE TABLE "mcp_servers" (
	"id" text PRIMARY KEY NOT NULL,
	"owner_id" text,
	"name" text NOT NULL,
	"transport" text NOT NULL,
	"url" text,
	"command" jsonb,
	"secrets" text,
	"auth" text NOT NULL,
	"oauth_client_id" text,
	"oauth_client" text,
	"approval" text NOT NULL,
	"timeout_s" bigint,
	"enabled" boolean NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"version" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "mcp_tokens" (
	"server_id" text NOT NULL,
	"user_id" text NOT NULL,
	"tokens" text,
	"expires_at" bigint,
	"flow_state" text,
	"flow" text,
	"flow_expires_at" bigint,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "mcp_tokens_server_id_user_id_pk" PRIMARY KEY("server_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "mcp_servers" ADD CONSTRAINT "mcp_servers_owner_id_users_id_fk" FOREIGN KEY ("owner_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_tokens" ADD CONSTRAINT "mcp_tokens_server_id_mcp_servers_id_fk" FOREIGN KEY ("server_id") REFERENCES "public"."mcp_servers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mcp_tokens" ADD CONSTRAINT "mcp_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_servers_owner_name_idx" ON "mcp_servers" USING btree ("owner_id","name");--> statement-breakpoint
CREATE UNIQUE INDEX "mcp_servers_admin_name_idx" ON "mcp_servers" USING btree ("name") WHERE "mcp_servers"."owner_id" IS NULL;--> statement-breakpoint
CREATE INDEX "mcp_tokens_flow_state_idx" ON "mcp_tokens" USING btree ("flow_state");