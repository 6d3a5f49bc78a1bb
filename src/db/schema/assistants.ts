import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core';
import { users } from './users';

export const ASSISTANT_VISIBILITIES = ['private', 'everyone', 'tiers'] as const;
export type AssistantVisibility = (typeof ASSISTANT_VISIBILITIES)[number];

/**
 * A saved assistant (docs/assistants.md): instructions, a model and a choice of tools under a
 * name. A user's own (`owner_id`, always `private`), or shared by an admin (`owner_id` null) with
 * everyone or with some subscription tiers. A conversation started with one remembers it
 * (`conversations.assistant_id`), and each of its turns uses it.
 */
export const assistants = sqliteTable(
  'assistants',
  {
    id: text('id').primaryKey(),
    /** Null: shared by an admin. */
    ownerId: text('owner_id').references(() => users.id, { onDelete: 'cascade' }),
    visibility: text('visibility', { enum: ASSISTANT_VISIBILITIES }).notNull(),
    /** With `visibility: tiers`: the subscription tiers whose users see it. */
    tiers: text('tiers', { mode: 'json' }).$type<string[]>().notNull(),
    name: text('name').notNull(),
    description: text('description').notNull(),
    /** Added to Parley's own system prompt at every turn. */
    instructions: text('instructions').notNull(),
    /** A catalogue id (docs/connections.md); null: the server's default. */
    model: text('model'),
    /** Tool source ids and tool names it may use; null: whatever the admin allows. */
    tools: text('tools', { mode: 'json' }).$type<string[] | null>(),
    /** Prompts the web app offers on an empty chat (at most 4). */
    starters: text('starters', { mode: 'json' }).$type<string[]>().notNull(),
    /**
     * Documents it always searches (its knowledge): its owner's, or for a shared one an admin's.
     * Checked again at every turn, so a file removed since is simply not read.
     */
    knowledgeFileIds: text('knowledge_file_ids', { mode: 'json' }).$type<string[]>().notNull().default([]),
    /** The MCP servers whose tools it gets; null: whatever its user has; []: none. */
    mcpServerIds: text('mcp_server_ids', { mode: 'json' }).$type<string[] | null>(),
    /** Sampling settings sent with each of its turns; an absent one is the provider's default. */
    parameters: text('parameters', { mode: 'json' }).$type<AssistantParameters>().notNull().default({}),
    /** Its avatar's version (a hash of the image in assistant_avatars); null: none. */
    avatarVersion: text('avatar_version'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('assistants_owner_idx').on(t.ownerId, t.name)],
);

export type Assistant = typeof assistants.$inferSelect;

/** An assistant's sampling settings (docs/assistants.md, "Parameters"). */
export interface AssistantParameters {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
}

/**
 * An assistant's avatar: a small square WebP made from the image uploaded (assistants/setAvatar),
 * base64. Apart from the assistant's row so that listing assistants does not read every image.
 */
export const assistantAvatars = sqliteTable('assistant_avatars', {
  assistantId: text('assistant_id')
    .primaryKey()
    .references(() => assistants.id, { onDelete: 'cascade' }),
  webp: text('webp').notNull(),
  updatedAt: integer('updated_at').notNull(),
});
