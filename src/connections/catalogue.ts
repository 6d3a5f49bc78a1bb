import type { ConnectionRow, ModelSettingRow } from '../db/schema';
import { chatModelOf, optionsOf } from './connection-options';
import type { ModelListEntry } from './model-lists';

/**
 * One model catalogue across the chat connections (docs/connections.md, "The model catalogue"):
 * ids `<connection>/<upstream id>`, what each model can do (detected, or the admin's word), the
 * admin's names, order, hiding and tiers.
 */
export interface Capabilities {
  vision: boolean;
  tools: boolean;
  thinking: boolean;
  /** The context window in tokens, when known. */
  contextTokens: number | null;
}

export interface CatalogueEntry {
  id: string;
  /** The upstream model id. */
  model: string;
  name: string;
  connection: string;
  connectionId: string;
  capabilities: Capabilities;
  /** What the connection tells of the model, before the admin's word. */
  detected: Capabilities;
  /** The admin's word on each capability; null: as detected. */
  overrides: { [K in keyof Capabilities]: Capabilities[K] | null };
  /** False when its connection did not answer its last look (its models are kept, marked). */
  available: boolean;
  hidden: boolean;
  position: number | null;
  /** Tiers that may use it; null: every tier. */
  tiers: string[] | null;
}

/** Models of a list that do not chat: embeddings, speech, images, moderation, rerankers. */
export const NOT_CHAT = /embed|whisper|tts|dall-e|moderation|transcribe|rerank/i;
/** A server with hundreds of models (OpenRouter) still makes a usable menu. */
const MAX_MODELS_PER_CONNECTION = 200;

export const catalogueId = (row: Pick<ConnectionRow, 'name'>, model: string) => `${row.name}/${model}`;

/** What a model can do, as far as its connection's kind and options tell. */
function detected(row: ConnectionRow, model: string): Capabilities {
  const o = optionsOf(row);
  if (row.api === 'anthropic')
    return { vision: true, tools: true, thinking: /claude-(3-7|sonnet-[4-9]|opus-[4-9]|haiku-[4-9]|\w+-[5-9])/.test(model), contextTokens: 200_000 };
  if (row.api === 'openai-responses') return { vision: true, tools: true, thinking: /^(o\d|gpt-5)/.test(model), contextTokens: null };
  return { vision: o.vision !== 'off', tools: o.tools !== 'off', thinking: /think|reason|r1|qwq|qwen3/i.test(model), contextTokens: o.contextTokens || null };
}

/**
 * The models a connection offers: its default (and research) model first, then what it lists
 * (minus models that do not chat), then any the admin has settings for. A connection that did
 * not answer keeps its pinned models, marked unavailable.
 */
export function connectionModels(row: ConnectionRow, list: ModelListEntry | undefined, settings: ModelSettingRow[]): CatalogueEntry[] {
  const pinned = [chatModelOf(row)];
  const listed = (list?.probe.models ?? []).filter((m) => !NOT_CHAT.test(m));
  const own = settings.filter((s) => s.connectionId === row.id);
  const ids = [...new Set([...pinned, ...listed, ...own.map((s) => s.model)])].slice(0, MAX_MODELS_PER_CONNECTION);
  // Up but without a model list (a 404 there) still answers turns; unreachable or refusing the key does not.
  const available = !list || (list.probe.reachable && !list.probe.refused);
  return ids.map((model) => {
    const s = own.find((x) => x.model === model);
    const caps = detected(row, model);
    return {
      id: catalogueId(row, model),
      model,
      name: s?.displayName || model,
      connection: row.name,
      connectionId: row.id,
      capabilities: {
        vision: s?.vision ?? caps.vision,
        tools: s?.tools ?? caps.tools,
        thinking: s?.thinking ?? caps.thinking,
        contextTokens: s?.contextTokens ?? caps.contextTokens,
      },
      detected: caps,
      overrides: { vision: s?.vision ?? null, tools: s?.tools ?? null, thinking: s?.thinking ?? null, contextTokens: s?.contextTokens ?? null },
      available,
      hidden: s?.hidden ?? false,
      position: s?.position ?? null,
      tiers: s?.tiers ?? null,
    };
  });
}

/** The admin's order first (by position), then connections and their lists as they come. */
export function ordered(entries: CatalogueEntry[]): CatalogueEntry[] {
  return entries
    .map((e, i) => ({ e, i }))
    .sort((a, b) => (a.e.position ?? Number.MAX_SAFE_INTEGER) - (b.e.position ?? Number.MAX_SAFE_INTEGER) || a.i - b.i)
    .map(({ e }) => e);
}

export const allowedFor = (entry: Pick<CatalogueEntry, 'tiers'>, tier: string | undefined) => !entry.tiers || (tier !== undefined && entry.tiers.includes(tier));
