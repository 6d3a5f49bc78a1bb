import { sql } from 'drizzle-orm';
import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users';
import { conversations } from './conversations';
import { vectorColumn } from '../vector-column';

/**
 * Stored bytes, named by their SHA-256: the same bytes uploaded twice (by one user or by two) are
 * stored once (docs/files.md, "Storage"). A blob no file names any more is removed by the sweep.
 */
export const fileBlobs = sqliteTable('file_blobs', {
  sha256: text('sha256').primaryKey(),
  size: integer('size').notNull(),
  createdAt: integer('created_at').notNull(),
});

/** A user's file: an upload, or an image the AI generated for them. */
export const files = sqliteTable(
  'files',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    // No cascade: a blob outlives its last file until the sweep removes it from storage first.
    sha256: text('sha256')
      .notNull()
      .references(() => fileBlobs.sha256),
    filename: text('filename').notNull(),
    mimeType: text('mime_type').notNull(),
    kind: text('kind', { enum: ['image', 'document'] }).notNull(),
    size: integer('size').notNull(),
    width: integer('width'),
    height: integer('height'),
    /** An image's thumbnail (a small JPEG), made at upload; a blob like any other. */
    thumbSha256: text('thumb_sha256').references(() => fileBlobs.sha256),
    source: text('source', { enum: ['upload', 'generated'] }).notNull().default('upload'),
    /** Documents into text (src/files/extract/): none for images, pending until the worker is done. */
    textStatus: text('text_status', { enum: ['none', 'pending', 'ready', 'failed'] }).notNull().default('none'),
    textError: text('text_error'),
    textChars: integer('text_chars'),
    /**
     * Moves on in every transaction that changes the document's chunks or their vectors: a search
     * index that kept codes of another version reads them again (src/files/embeddings-index.ts).
     */
    vectorsVersion: integer('vectors_version').notNull().default(0),
    /**
     * What made a generated file (the code interpreter: its tool call), so that the call run again
     * after a restart finds the file it kept rather than keeping a second (src/files/add-file.ts).
     * Null for uploads; one file per origin and name.
     */
    origin: text('origin'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    index('files_user_idx').on(t.userId, t.createdAt),
    index('files_sha256_idx').on(t.sha256),
    index('files_text_status_idx').on(t.textStatus),
    uniqueIndex('files_origin_idx').on(t.origin, t.filename),
  ],
);

/**
 * A file attached to a conversation (sent with a chat or research message): the conversation's
 * writers may read it too. Goes with the file or the conversation.
 */
export const fileAttachments = sqliteTable(
  'file_attachments',
  {
    fileId: text('file_id')
      .notNull()
      .references(() => files.id, { onDelete: 'cascade' }),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => conversations.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.fileId, t.conversationId] }), index('file_attachments_conversation_idx').on(t.conversationId)],
);

/**
 * A document's text in chunks, searchable (SQLite FTS5 / PostgreSQL tsvector, custom migrations)
 * and optionally embedded (src/files/embeddings-fill.ts): `embedding` is the vector's float32
 * bytes (little-endian, scaled to length 1), base64 to the application (held as bytea on
 * PostgreSQL: src/db/vector-column.ts), `embeddingModel` the model that made it, so
 * vectors of two models are never compared. A model that refused a chunk leaves `embedding` null
 * beside its name, and the chunk is not sent to it again. `embeddingCode` is the vector's sign
 * bits in base64 (1/32 of its bytes), written with it: what a search's index is built from
 * (src/files/embeddings-index.ts), read through an index of its own without touching the rows.
 */
export const fileChunks = sqliteTable(
  'file_chunks',
  {
    id: text('id').primaryKey(),
    fileId: text('file_id')
      .notNull()
      .references(() => files.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    page: integer('page'),
    startChar: integer('start_char').notNull(),
    content: text('content').notNull(),
    embedding: vectorColumn('embedding'),
    embeddingModel: text('embedding_model'),
    embeddingCode: text('embedding_code'),
  },
  (t) => [
    uniqueIndex('file_chunks_file_seq_idx').on(t.fileId, t.seq),
    // By model: the chunks still to embed are found without reading every vector.
    index('file_chunks_embedding_model_idx').on(t.embeddingModel),
    // Covering: a search reads a document's codes from the index alone, never the rows of ~10 KB
    // that hold them (measured: 0.1 s against 8 s for 100,000 chunks on SQLite).
    index('file_chunks_codes_idx').on(t.fileId, t.embeddingModel, t.seq, t.embeddingCode),
    // Vectors stored before codes were: what the background pass codes, and a search reads whole.
    index('file_chunks_uncoded_idx').on(t.fileId).where(sql`${t.embedding} IS NOT NULL AND ${t.embeddingCode} IS NULL`),
  ],
);

/**
 * What each embeddings model (`model`: its name, and `#<dimensions>` when set) answered for a
 * fixed probe text (`probe`, its unit vector in base64), so that another model served under the
 * same name is noticed (src/files/embeddings-model.ts). `generation` counts the models seen under
 * that name: past the first, chunks' vectors are labelled `<model>@<generation>`, and those of an
 * earlier one are embedded again. `since`: when this generation was first seen.
 */
export const embeddingModels = sqliteTable('embedding_models', {
  model: text('model').primaryKey(),
  generation: integer('generation').notNull(),
  probe: text('probe').notNull(),
  since: integer('since').notNull(),
});

export type FileBlob = typeof fileBlobs.$inferSelect;
export type FileRow = typeof files.$inferSelect;
export type FileChunk = typeof fileChunks.$inferSelect;
