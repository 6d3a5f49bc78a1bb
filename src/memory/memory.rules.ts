/** What the API and the assistant's tools share about memories (docs/memory.md). */

/** The longest memory, in characters: a fact, not a document. */
export const MEMORY_MAX_CHARS = 500;

export const fullMessage = (max: number) =>
  `You keep ${max} memories, the most this server allows (PARLEY_MEMORY_MAX_PER_USER): delete some before adding more.`;

/** A memory's text as the model reads it: one line (the budget cuts the prompt's section by lines). */
export const oneLine = (content: string) => content.replace(/\s+/g, ' ').trim();
