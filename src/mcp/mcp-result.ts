import type { CallToolResult } from '@modelcontextprotocol/client';
import type { AppDeps } from '../deps';
import type { McpContent } from '../ai/ai.types';
import { findKeptImage, keepImage } from '../files/image.tools';

/**
 * A tool's result mapped into the turn (docs/mcp.md, "Results"): the text the model reads and the
 * content `mcp_call.completed` shows. Text is kept as it is; an image becomes the user's file
 * (shown in the answer, kept like a generated image); an embedded resource's text is read, its
 * other contents named; a resource link is named; structured content is given as JSON when the
 * tool wrote no text. The text is cut at `maxChars` with a line saying how long it was, so a
 * 10 MB answer costs the model what a page costs.
 */
export interface MappedResult {
  text: string;
  content: McpContent[];
}

const IMAGE_TYPES = /^image\/(png|jpeg|webp|gif)$/;

export async function mapResult(
  deps: AppDeps,
  result: CallToolResult,
  where: { userId: string; callKey: string; maxChars: number },
): Promise<MappedResult> {
  const parts: string[] = [];
  const content: McpContent[] = [];
  // Named after the call: a restart that runs the call again finds the file instead of making a second.
  const base = `mcp-${new Bun.CryptoHasher('sha256').update(where.callKey).digest('hex').slice(0, 16)}`;
  let images = 0;
  const keep = async (data: string, mimeType: string): Promise<void> => {
    const name = `${base}-${++images}`;
    const earlier = await findKeptImage(deps, where.userId, name);
    const kept = earlier ? { file: earlier } : await keepImage(deps, where.userId, name, Buffer.from(data, 'base64'), 'The tool sent an image Parley cannot read.');
    if ('error' in kept) {
      parts.push(`[An image (${mimeType}) the tool sent was not kept: ${kept.error}]`);
      return;
    }
    const f = kept.file;
    content.push({ type: 'image', fileId: f.id, mimeType: f.mimeType, width: f.width ?? undefined, height: f.height ?? undefined });
    parts.push(`[Image: kept as the user's file ${f.filename} (${f.id}) and shown to them.]`);
  };

  for (const block of result.content ?? []) {
    if (block.type === 'text') {
      parts.push(block.text);
      content.push({ type: 'text', text: block.text });
    } else if (block.type === 'image') {
      if (IMAGE_TYPES.test(block.mimeType)) await keep(block.data, block.mimeType);
      else parts.push(`[An image of type ${block.mimeType}, which Parley does not keep.]`);
    } else if (block.type === 'audio') {
      parts.push(`[Audio (${block.mimeType}), not played here.]`);
      content.push({ type: 'audio', mimeType: block.mimeType });
    } else if (block.type === 'resource') {
      const r = block.resource;
      if ('text' in r && typeof r.text === 'string') {
        parts.push(`Resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}:\n${r.text}`);
        content.push({ type: 'resource', uri: r.uri, mimeType: r.mimeType, text: r.text });
      } else if ('blob' in r && typeof r.blob === 'string' && r.mimeType && IMAGE_TYPES.test(r.mimeType)) {
        await keep(r.blob, r.mimeType);
      } else {
        parts.push(`[Resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}: binary content, not shown.]`);
        content.push({ type: 'resource', uri: r.uri, mimeType: r.mimeType });
      }
    } else if (block.type === 'resource_link') {
      parts.push(`[Resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}${block.description ? ` — ${block.description}` : ''}]`);
      content.push({ type: 'resource_link', uri: block.uri, name: block.name });
    }
  }
  if (!parts.length && result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    parts.push(json);
    content.push({ type: 'text', text: json });
  }
  return cut({ text: parts.join('\n\n') || '(The tool returned nothing.)', content }, where.maxChars);
}

/** The model's text and the event's texts, each cut cleanly at `maxChars` with a line that says so. */
function cut(mapped: MappedResult, maxChars: number): MappedResult {
  const note = (length: number) => `\n\n[… cut: the tool's answer was ${length.toLocaleString('en-US')} characters; the first ${maxChars.toLocaleString('en-US')} are shown (PARLEY_MCP_RESULT_MAX_CHARS).]`;
  const text = mapped.text.length > maxChars ? cleanSlice(mapped.text, maxChars) + note(mapped.text.length) : mapped.text;
  let budget = maxChars;
  const content = mapped.content.map((c) => {
    if ((c.type !== 'text' && c.type !== 'resource') || c.text === undefined) return c;
    const length = c.text.length;
    const kept = length > budget ? cleanSlice(c.text, budget) + note(length) : c.text;
    budget = Math.max(0, budget - length);
    return { ...c, text: kept };
  });
  return { text, content };
}

/** The first `n` UTF-16 units, without splitting a surrogate pair. */
function cleanSlice(text: string, n: number): string {
  const end = n > 0 && /[\uD800-\uDBFF]/.test(text[n - 1] ?? '') ? n - 1 : n;
  return text.slice(0, end);
}
