/**
 * Pieces of Anthropic's Messages wire format shared by the chat adapter (anthropic-messages.ts)
 * and the `/v1` door's translation (src/openai-compat/upstream-anthropic.ts), apart from the SDK
 * so that the door does not load it.
 */
export type Block = Record<string, unknown> & { type: string };

/** An image as a content block: a data URL's bytes, or a URL the API fetches. */
export function imageBlock(url: string): Block {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return data ? { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] } } : { type: 'image', source: { type: 'url', url } };
}
