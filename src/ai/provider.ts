import type { Config } from '../config';
import type { AiProvider } from './ai.types';
import { createChatProvider } from './openai-chat';
import { createResponsesProvider } from './openai-responses';
import { createSearxngSearch, type SearchProvider } from './search';
import { createCapabilities } from './capabilities';
import { createModelContextSource } from './model-context';

/** Pages read by the research loop: enough text to cite, small enough for a Raspberry Pi. */
const PAGE_MAX_BYTES = 512 * 1024;
const PAGE_TIMEOUT_MS = 10_000;

export function createSearchProvider(config: Config): SearchProvider | undefined {
  return config.searchProvider === 'searxng' ? createSearxngSearch(config.searxngUrl) : undefined;
}

/** The configured AI provider, or `undefined` for `none` (AI operations then answer with an in-stream error). */
export function createAiProvider(config: Config): AiProvider | undefined {
  const common = { baseUrl: config.aiBaseUrl, apiKey: config.aiApiKey, model: config.aiModel, researchModel: config.researchModel };
  switch (config.aiProvider) {
    case 'openai-responses':
      return createResponsesProvider(common);
    case 'openai-chat':
      return createChatProvider({
        ...common,
        search: createSearchProvider(config),
        capabilities: createCapabilities({ tools: config.aiTools, images: config.aiVision }, config.aiBaseUrl),
        idleTimeoutMs: config.aiIdleTimeoutS * 1000,
        budget: {
          contexts: createModelContextSource({ baseUrl: config.aiBaseUrl, apiKey: config.aiApiKey, contextTokens: config.aiContextTokens }),
          answerTokens: config.aiAnswerTokens,
        },
        research: {
          breadth: config.researchBreadth,
          depth: config.researchDepth,
          page: { maxBytes: PAGE_MAX_BYTES, timeoutMs: PAGE_TIMEOUT_MS, allowPrivate: config.fetchAllowPrivate, allowHosts: config.fetchAllowHosts },
        },
      });
    case 'none':
      return undefined;
  }
}
