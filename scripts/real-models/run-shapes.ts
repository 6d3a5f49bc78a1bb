import { startParley, type Parley } from './parley-binary';
import { SHAPES, TOOL_ROLE_REFUSED, runShape, type ShapeName, type ShapeResult } from './shapes';
import { startToolCallProxy } from './tool-call-proxy';

export interface Rig {
  /** The compiled `parley`. */
  bin: string;
  /** llama-server's API root (`…/v1`). */
  llamaApiUrl: string;
  /** A SearxNG (the fake) whose result pages are on 127.0.0.1. */
  searxngUrl: string;
}

/** The members the group shape needs; the first also runs the chat shapes. */
const EMAILS = ['ann@parley.test', 'bob@parley.test', 'cy@parley.test'];

/** A `parley` configured for the model behind `rig.llamaApiUrl`, through the tool-call proxy; `stop` ends both. */
export async function startParleyFor(rig: Rig): Promise<Parley> {
  const proxy = startToolCallProxy(rig.llamaApiUrl.replace(/\/v1$/, ''));
  try {
    const p = await startParley(
      rig.bin,
      {
        PARLEY_AI_PROVIDER: 'openai-chat',
        PARLEY_AI_BASE_URL: proxy.apiUrl,
        PARLEY_AI_API_KEY: 'none',
        PARLEY_AI_MODEL: 'tiny',
        PARLEY_RESEARCH_MODEL: 'tiny',
        PARLEY_SEARCH_PROVIDER: 'searxng',
        PARLEY_SEARXNG_URL: rig.searxngUrl,
        // The fake's result pages are on 127.0.0.1, where research may read only when allowed.
        PARLEY_FETCH_ALLOW_HOSTS: '127.0.0.1',
        PARLEY_RESEARCH_BREADTH: '1',
        PARLEY_RESEARCH_DEPTH: '1',
      },
      EMAILS,
    );
    return { ...p, upstreamRefusals: () => proxy.refused, stop: () => p.stop().finally(() => proxy.stop()) };
  } catch (err) {
    proxy.stop();
    throw err;
  }
}

/** Every shape, one after another, against one parley. */
export async function runShapesAgainst(rig: Rig, onResult: (shape: ShapeName, result: ShapeResult) => void): Promise<void> {
  const p = await startParleyFor(rig);
  try {
    // One parley per template, so the history-tool round is the first to carry a tool's result:
    // the refusal Parley learns from is expected there, any other still fails the cell.
    for (const shape of SHAPES) onResult(shape, await runShape(p, shape, shape === 'history tool' ? TOOL_ROLE_REFUSED : undefined));
  } finally {
    await p.stop();
  }
}
