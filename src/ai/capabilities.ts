import OpenAI from 'openai';
import { keyedFetch } from '../net/keyed-fetch';

/**
 * What a Chat Completions server accepts besides text: tools and images. Many refuse them
 * outright (llama-server without `--jinja`: "tools param requires --jinja flag"; without
 * `--mmproj`: HTTP 500 "image input is not supported"; Ollama with a model lacking either), and
 * a refusal repeated on every turn would break every conversation. So, per setting:
 * `on` always sends, `off` never does, and `auto` asks the server where it says (llama-server's
 * `/props`: vision), otherwise sends until the first refusal and then stops for the life of the process.
 */
export type CapabilitySetting = 'auto' | 'on' | 'off';
export type Capability = 'tools' | 'images';
/**
 * What a refusal can take away: a capability, or `toolRole`: tool results as `tool` messages.
 * Templates without a tool role that demand strict user/assistant alternation (Gemma 2) refuse
 * the request carrying a tool's result ("Conversation roles must alternate"); llama-server's
 * generic tool format serves them tool definitions but leaves the roles as they are. No setting
 * and no `/props` answer tells it (`chat_template_caps.supports_tool_calls` is false for templates
 * that take the tool role fine, e.g. SmolLM3): always learned from the refusal, after
 * which tool results go as marked user turns (shape-chat-messages.ts).
 */
export type Refusable = Capability | 'toolRole';

export interface Capabilities {
  /** Whether this request may carry tools / images / `tool` messages. */
  allows(what: Refusable): Promise<boolean>;
  /**
   * A request carrying `sent` was refused with `err`: what to drop for one retry, now remembered
   * as unsupported, or `undefined` when the refusal is about none of them.
   */
  refused(err: unknown, sent: Partial<Record<Refusable, boolean>>): Refusable | undefined;
}

/** What llama-server's `GET /props` says (other servers answer 404: nothing known). */
export interface ServerProps {
  images?: boolean;
}

/** `/props` must not hold up a turn: a server that does not answer quickly is asked nothing. */
const PROPS_TIMEOUT_MS = 2000;

/** Words of a refusal that name the capability (llama-server's and Ollama's messages). */
const REFUSAL: Record<Refusable, RegExp> = {
  tools: /\btools?\b|--jinja|function/i,
  images: /\bimages?\b|vision|mmproj|multimodal|image_url/i,
  // "Conversation roles must alternate", "Only user and assistant roles are supported", "Unknown role".
  toolRole: /\broles?\b/i,
};

export function createCapabilities(settings: Record<Capability, CapabilitySetting>, baseUrl: string | undefined): Capabilities {
  const learned: Partial<Record<Refusable, boolean>> = {};
  const setting = (what: Refusable): CapabilitySetting => (what === 'toolRole' ? 'auto' : settings[what]);
  let props: Promise<ServerProps> | undefined;
  return {
    async allows(what) {
      if (setting(what) !== 'auto') return setting(what) === 'on';
      if (learned[what] !== undefined) return learned[what]!;
      if (what === 'toolRole') return true;
      props ??= readServerProps(baseUrl);
      return what === 'images' ? ((await props).images ?? true) : true;
    },
    refused(err, sent) {
      if (!(err instanceof OpenAI.APIError) || !err.status || err.status < 400) return undefined;
      // The tool role before tools: a template's refusal quotes its own source, which may mention tools.
      const what = (['images', 'toolRole', 'tools'] as const).find((c) => sent[c] && setting(c) === 'auto' && REFUSAL[c].test(err.message));
      if (what) learned[what] = false;
      return what;
    },
  };
}

/**
 * llama-server's `/props` beside its `/v1` API root: `modalities.vision` (false without a
 * multimodal projector: every image is refused). Not `chat_template_caps.supports_tools`: it is
 * false for templates that do not render tool definitions themselves, yet llama-server still
 * takes tools for them through its generic tool format, and the chat-template matrix saw tool
 * rounds answer on six such templates (DeepSeek-R1-Distill, DeepSeek-V3.1, Phi-3.5, SmolLM3…).
 * Tools are judged by a refusal instead. Anything else: nothing known.
 */
export async function readServerProps(baseUrl: string | undefined): Promise<ServerProps> {
  if (!baseUrl) return {};
  try {
    const res = await keyedFetch()(`${baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/props`, { signal: AbortSignal.timeout(PROPS_TIMEOUT_MS) });
    if (!res.ok) return {};
    const body = (await res.json()) as { modalities?: { vision?: unknown } };
    const vision = body?.modalities?.vision;
    return typeof vision === 'boolean' ? { images: vision } : {};
  } catch {
    return {};
  }
}
