/**
 * Connections and the model catalogue as the `admin/*` operations give them (docs/connections.md),
 * and what the Admin page needs to know of each kind: its APIs, its options, an example address.
 */
export type Kind = 'chat' | 'embeddings' | 'images' | 'stt' | 'tts' | 'search' | 'video';

export interface Health {
  reachable: boolean;
  latencyMs: number;
  error: string | null;
  /** How many models it listed, when it lists them. */
  models: number | null;
  checkedAt: string;
}

export interface Connection {
  id: string;
  name: string;
  kind: Kind;
  api: string;
  baseUrl: string;
  hasCredential: boolean;
  options: Record<string, string | number>;
  enabled: boolean;
  source: 'env' | 'admin' | 'discovered';
  allowPrivate: boolean;
  health: Health | null;
}

export interface TestResult {
  reachable: boolean;
  latencyMs: number;
  error: string | null;
  models: string[];
}

export interface Capabilities {
  vision: boolean;
  tools: boolean;
  thinking: boolean;
  contextTokens: number | null;
}

export interface ModelSetting {
  id: string;
  connection: string;
  model: string;
  name: string;
  hidden: boolean;
  position: number | null;
  capabilities: Capabilities;
  detected: Capabilities;
  overrides: { [K in keyof Capabilities]: Capabilities[K] | null };
  tiers: string[] | null;
  available: boolean;
}

export type Purpose = 'chat' | 'research' | 'group' | 'title';
export type Defaults = Record<Purpose, string>;

export const KIND_NAMES: Record<Kind, string> = {
  chat: 'Chat',
  embeddings: 'Embeddings (documents searched by meaning)',
  images: 'Images',
  stt: 'Speech to text',
  tts: 'Text to speech',
  search: 'Web search',
  video: 'Video generation',
};

export const API_NAMES: Record<string, string> = {
  'openai-chat': 'OpenAI-compatible Chat Completions',
  'openai-responses': "OpenAI's Responses API",
  anthropic: "Anthropic's Messages API",
  openai: 'OpenAI-compatible',
  searxng: 'SearxNG',
};

/** Which APIs a kind speaks (the server's API_OF_KIND), the first being the default: chat has three, search is SearxNG, the rest OpenAI's. */
export const apisOf = (kind: Kind): string[] => (kind === 'chat' ? ['openai-chat', 'openai-responses', 'anthropic'] : kind === 'search' ? ['searxng'] : ['openai']);

/** An address of the usual shape, as the field's example. */
export function exampleUrl(kind: Kind, api: string): string {
  if (api === 'anthropic') return 'https://api.anthropic.com';
  if (api === 'openai-responses') return 'https://api.openai.com/v1';
  return { chat: 'http://127.0.0.1:11434/v1', embeddings: 'http://127.0.0.1:11434/v1', images: 'http://127.0.0.1:8080/v1', stt: 'http://127.0.0.1:8000/v1', tts: 'http://127.0.0.1:8880/v1', search: 'http://127.0.0.1:8888', video: 'https://api.openai.com/v1' }[kind];
}

export interface OptionField {
  key: string;
  label: string;
  /** `mode`: auto, on or off. */
  type: 'text' | 'number' | 'mode';
  hint: string;
  /** The APIs that read it (chat's options differ by API); all of the kind's when absent. */
  apis?: string[];
  min?: number;
  max?: number;
}

/** An option left empty takes the server's setting of the same meaning, whose default this is. */
const unset = (value: string) => `Empty: the server's setting (${value} unless changed).`;

/** The options each kind takes (docs/connections.md, "Options"; their defaults in docs/configuration.md). */
export const OPTIONS: Record<Kind, OptionField[]> = {
  chat: [
    { key: 'model', label: 'Default model', type: 'text', hint: 'Used when a turn names none. Empty: the first chat model the server lists.' },
    { key: 'researchModel', label: 'Research model', type: 'text', hint: "Deep research's model. Empty: the default model." },
    { key: 'tools', label: 'Offer tools', type: 'mode', apis: ['openai-chat'], hint: 'auto: yes, unless the server refuses them once.' },
    { key: 'vision', label: 'Send images', type: 'mode', apis: ['openai-chat'], hint: 'auto: yes, unless the server says the model has no vision or refuses an image.' },
    { key: 'contextTokens', label: 'Context window (tokens)', type: 'number', min: 0, max: 10_000_000, apis: ['openai-chat'], hint: 'Empty or 0: ask the server.' },
    { key: 'answerTokens', label: 'Longest answer (tokens)', type: 'number', min: 0, max: 1_000_000, apis: ['openai-chat', 'anthropic'], hint: 'Empty: the usual share of the window.' },
    { key: 'idleTimeoutS', label: 'Idle timeout (seconds)', type: 'number', min: 1, max: 3600, apis: ['openai-chat', 'anthropic'], hint: `How long a silent server is waited for. ${unset('180')}` },
    { key: 'thinkingTokens', label: 'Thinking budget (tokens)', type: 'number', min: 0, max: 1_000_000, apis: ['anthropic'], hint: 'Extended thinking. Empty, 0 or under 1,024: off.' },
  ],
  embeddings: [
    { key: 'model', label: 'Model', type: 'text', hint: unset('text-embedding-3-small') },
    { key: 'dimensions', label: 'Dimensions', type: 'number', min: 0, max: 100_000, hint: "Empty or 0: the model's own (unless the server's setting says otherwise)." },
    { key: 'batch', label: 'Chunks per request', type: 'number', min: 1, max: 2048, hint: unset('32') },
    { key: 'timeoutS', label: 'Timeout (seconds)', type: 'number', min: 1, max: 3600, hint: unset('60') },
  ],
  images: [
    { key: 'model', label: 'Model', type: 'text', hint: unset('gpt-image-1') },
    { key: 'size', label: 'Size', type: 'text', hint: `WIDTHxHEIGHT or auto. ${unset('1024x1024')}` },
    { key: 'timeoutS', label: 'Timeout (seconds)', type: 'number', min: 1, max: 3600, hint: unset('300') },
  ],
  stt: [
    { key: 'model', label: 'Model', type: 'text', hint: unset('whisper-1') },
    { key: 'maxBytes', label: 'Largest recording (bytes)', type: 'number', min: 1, max: 1_000_000_000, hint: "Empty: the server's setting (PARLEY_STT_MAX_BYTES)." },
  ],
  tts: [
    { key: 'model', label: 'Model', type: 'text', hint: unset('tts-1') },
    { key: 'voice', label: 'Voice', type: 'text', hint: unset('alloy') },
    { key: 'maxChars', label: 'Longest text (characters)', type: 'number', min: 1, max: 1_000_000, hint: unset('4,096') },
  ],
  search: [],
  video: [
    { key: 'model', label: 'Model', type: 'text', hint: unset('sora-2') },
    { key: 'seconds', label: 'Clip length (seconds)', type: 'number', min: 1, max: 120, hint: `OpenAI takes 4, 8 or 12. ${unset('4')}` },
    { key: 'timeoutS', label: 'Time limit of a job (seconds)', type: 'number', min: 1, max: 3600, hint: `From its start to its download. ${unset('900')}` },
  ],
};

export const optionsFor = (kind: Kind, api: string) => OPTIONS[kind].filter((o) => !o.apis || o.apis.includes(api));

/** The subscription tiers the Admin page offers (the users' tier field). */
export const TIERS = ['FREE', 'PLUS', 'PRO'];
