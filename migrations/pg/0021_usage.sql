CREATE TABLE "usage_days" (
	"user_id" text NOT NULL,
	"day" text NOT NULL,
	"tokens" bigint NOT NULL,
	"research_runs" bigint NOT NULL,
	"images" bigint NOT NULL,
	CONSTRAINT "usage_days_user_id_day_pk" PRIMARY KEY("user_id","day")
);
--> statement-breakpoint
CREATE TABLE "usage_prices" (
	"model" text PRIMARY KEY NOT NULL,
	"input_micro" bigint NOT NULL,
	"output_micro" bigint NOT NULL,
	"unit_micro" bigint NOT NULL,
	"request_micro" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_records" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"api_key_id" text,
	"connection_id" text,
	"model" text NOT NULL,
	"assistant_id" text,
	"kind" text NOT NULL,
	"input_tokens" bigint NOT NULL,
	"output_tokens" bigint NOT NULL,
	"cached_tokens" bigint NOT NULL,
	"reasoning_tokens" bigint NOT NULL,
	"units" bigint NOT NULL,
	"credits_micro" bigint NOT NULL,
	"estimated" boolean NOT NULL,
	"response_id" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_reservations" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"tokens" bigint NOT NULL,
	"images" bigint NOT NULL,
	"credits_micro" bigint NOT NULL,
	"paid" boolean NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_tiers" (
	"name" text PRIMARY KEY NOT NULL,
	"period" text NOT NULL,
	"tokens" bigint,
	"research_runs" bigint,
	"images" bigint,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD COLUMN "amount_micro" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_days" ADD CONSTRAINT "usage_days_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_records" ADD CONSTRAINT "usage_records_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_records" ADD CONSTRAINT "usage_records_api_key_id_api_keys_id_fk" FOREIGN KEY ("api_key_id") REFERENCES "public"."api_keys"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "usage_reservations" ADD CONSTRAINT "usage_reservations_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "usage_records_user_idx" ON "usage_records" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "usage_records_time_idx" ON "usage_records" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "usage_reservations_user_idx" ON "usage_reservations" USING btree ("user_id","expires_at");