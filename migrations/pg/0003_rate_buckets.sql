CREATE TABLE "rate_buckets" (
	"key" text PRIMARY KEY NOT NULL,
	"milli_tokens" bigint NOT NULL,
	"at" bigint NOT NULL
);
