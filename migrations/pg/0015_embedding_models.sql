CREATE TABLE "embedding_models" (
	"model" text PRIMARY KEY NOT NULL,
	"generation" bigint NOT NULL,
	"probe" text NOT NULL,
	"since" bigint NOT NULL
);
