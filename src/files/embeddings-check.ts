import type { Config } from '../config';
import type { Check } from '../ops/checks';
import { embeddingsEnabled } from './embeddings-client';
import type { IndexState } from './embeddings-index';

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/**
 * The doctor's line on the semantic search index (docs/files.md, "How a search reads the
 * vectors"): how full it is in the running server (`state`, from `admin/doctor`), and whether
 * searches met documents it could not hold, which they then read from the database every time.
 * `parley doctor` runs outside the server: it can only say the cap.
 */
export function checkEmbeddingsIndex(config: Config, state?: IndexState): Check | undefined {
  // Embeddings may come from a connection added at runtime: an index holding documents is in use.
  if (!embeddingsEnabled(config) && !state?.documents) return undefined;
  const name = 'semantic search index';
  const cap = `PARLEY_EMBEDDINGS_INDEX_MB=${config.embeddingsIndexMb}`;
  if (!config.embeddingsIndexMb)
    return { name, status: 'warn', detail: `off (${cap}): every semantic search reads every document's codes from the database`, fix: 'set PARLEY_EMBEDDINGS_INDEX_MB (64 by default)' };
  if (!state) return { name, status: 'ok', detail: `up to ${config.embeddingsIndexMb} MB (${cap}); admin/doctor on the running server says how full it is` };
  const held = `${mb(state.bytes)} of ${mb(state.capBytes)} hold ${state.documents.toLocaleString('en')} documents (${state.chunks.toLocaleString('en')} chunks)`;
  if (!state.over) return { name, status: 'ok', detail: held };
  const o = state.over;
  return {
    name,
    status: 'warn',
    detail: `full: ${held}; a search at ${new Date(o.at).toISOString()} read ${o.documents.toLocaleString('en')} documents (${o.chunks.toLocaleString('en')} chunks) from the database that did not fit, as every search of them does (slower, their codes only)`,
    fix: `raise PARLEY_EMBEDDINGS_INDEX_MB to at least ${Math.ceil(o.bytes / 2 ** 20)} (what that search needed), memory permitting`,
  };
}
