import type { CallUsage } from '../ai/ai.types';
import type { Config } from '../config';
import type { AppDeps } from '../deps';
import { embeddingModelKey, embedTexts } from './embeddings-client';
import { addModelFingerprint, advanceModelGeneration, findModelFingerprint } from './embeddings.store';
import { createDecoder, dot, encodeVector } from './embeddings-vectors';

/**
 * The fixed text whose vector fingerprints a model. Never to change: every recorded fingerprint
 * is this text's vector, and another text would look like another model.
 */
export const PROBE_TEXT = 'Parley embeddings fingerprint: this fixed sentence tells one embedding model from another served under the same name.';

/** How often a process checks the model again while it uses it (one input more in a request it sends anyway). */
export const CHECK_EVERY_MS = 5 * 60_000;

/**
 * The cosine similarity above which two answers for the probe come from the same model. The same
 * weights differ in their last bits (batching, another build or machine, a quantised copy of
 * the same model: 0.999 and more); two models' spaces are unrelated, so their answers for one
 * text are near orthogonal (|cosine| of a few hundredths).
 */
const SAME_MODEL = 0.99;

type State = { label?: string; checkedAt: number };
// One state per embeddings connection's settings object, as the client is (src/files/embeddings-client.ts).
const states = new WeakMap<Config, State>();

function stateOf(config: Config): State {
  let state = states.get(config);
  if (!state) states.set(config, (state = { checkedAt: 0 }));
  return state;
}

type Deps = Pick<AppDeps, 'store' | 'log' | 'now'>;

/**
 * What stored vectors of the configured model are labelled with (`file_chunks.embedding_model`):
 * its key (src/files/embeddings-client.ts) for the first model seen under it, and
 * `<key>@<generation>` for each other one found since (docs/files.md, "A model changed under the
 * same name").
 */
export const modelLabel = (key: string, generation: number): string => (generation > 1 ? `${key}@${generation}` : key);

/** The label of this process's last check of `embeddings` (the connection's settings), else the database's (no request is sent for it). */
export async function currentModelLabel(deps: Deps, embeddings: Config): Promise<string> {
  const checked = stateOf(embeddings).label;
  if (checked) return checked;
  const key = embeddingModelKey(embeddings);
  const row = await deps.store.read((tx) => findModelFingerprint(tx, key));
  return modelLabel(key, row?.generation ?? 1);
}

/**
 * The texts' vectors (`embedTexts`) and the label they carry. With the first request of the
 * process, and then one every CHECK_EVERY_MS, the probe text rides along and its vector is
 * compared with the model's recorded fingerprint: a model that answers otherwise is another
 * model under the same name (a server's model file swapped, an alias moved), recorded as the
 * key's next generation. `changed` then: no stored vector carries the new label, so searches
 * compare none of the old model's, and the background pass embeds every chunk again.
 */
export async function embedLabelled(
  deps: Deps,
  embeddings: Config,
  texts: string[],
  opts: { timeoutMs?: number; signal?: AbortSignal; onUsage?: (usage: CallUsage) => void } = {},
): Promise<{ vectors: Float32Array[]; label: string; changed: boolean }> {
  const state = stateOf(embeddings);
  const now = deps.now();
  if (state.label && now - state.checkedAt < CHECK_EVERY_MS) return { vectors: await embedTexts(embeddings, texts, opts), label: state.label, changed: false };
  const vectors = await embedTexts(embeddings, [...texts, PROBE_TEXT], opts);
  const probe = vectors.pop()!;
  const settled = await settleFingerprint(deps, embeddingModelKey(embeddings), probe, now);
  state.label = settled.label;
  state.checkedAt = now;
  return { vectors, ...settled };
}

async function settleFingerprint(deps: Deps, key: string, probe: Float32Array, now: number): Promise<{ label: string; changed: boolean }> {
  const encoded = encodeVector(probe);
  const decode = createDecoder(probe.length);
  const settled = await deps.store.write(function* (tx) {
    // Another instance may record the same fingerprint or generation meanwhile: read it again then.
    for (let attempt = 0; ; attempt++) {
      const row = yield* findModelFingerprint(tx, key);
      if (!row) {
        if (attempt >= 3) return { generation: 1, changed: false as const };
        yield* addModelFingerprint(tx, { model: key, generation: 1, probe: encoded, since: now });
        continue;
      }
      const before = decode(row.probe);
      const similarity = before ? dot(before, probe) : 0;
      if (similarity >= SAME_MODEL || attempt >= 3) return { generation: row.generation, changed: false as const };
      if (yield* advanceModelGeneration(tx, { model: key, generation: row.generation + 1, probe: encoded, since: now }))
        return { generation: row.generation + 1, changed: true as const, similarity };
    }
  });
  if (settled.changed)
    deps.log.warn('the embeddings model answers otherwise than before under the same name: its chunks are embedded again, and searched by meaning once they are', {
      model: key,
      generation: settled.generation,
      similarity: Math.round(settled.similarity * 1000) / 1000,
    });
  return { label: modelLabel(key, settled.generation), changed: settled.changed };
}
