import { isIP } from 'node:net';
import type { Config } from '../config';
import { isPrivateAddress } from './address';

/**
 * Image URLs that Parley hands to the AI provider. Parley never fetches them itself, but many
 * model servers do (Ollama, vLLM, LM Studio, OpenAI), from wherever they run: a `file:` URL or an
 * address on the self-hoster's network would be read by the model server on the user's behalf.
 * So the provider gets only an inline image (`data:image/...`) or an `https:` URL to a public
 * host; `http:` and private hosts only when the operator allows them for a model server on a LAN.
 *
 * Host names are judged by their spelling only: no DNS lookup here. The model server resolves
 * the name, perhaps with another resolver on another network, so an answer Parley got would prove
 * nothing about where the model server connects. Names that are local by convention are refused.
 */

export interface ImageUrlPolicy {
  /** `http:` URLs and private, loopback and LAN hosts too (config PARLEY_AI_IMAGE_ALLOW_LAN). */
  allowLan: boolean;
}

export const imageUrlPolicy = (config: Pick<Config, 'aiImageAllowLan'>): ImageUrlPolicy => ({ allowLan: config.aiImageAllowLan });

export type ImageUrlCheck = { ok: true; url: string } | { ok: false; reason: string };

// A media type of the image/ family, then parameters or the data.
const DATA_IMAGE = /^data:image\/[a-z0-9][a-z0-9!#$&^_.+-]*[;,]/i;
// Names that only a local resolver answers (RFC 6761 and 8375, mDNS, common home-router suffixes).
const LOCAL_SUFFIXES = ['.localhost', '.local', '.lan', '.internal', '.home.arpa', '.localdomain'];

/** A host that names this machine or the local network, judged without resolving it. */
function isLocalHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (isIP(bare)) return isPrivateAddress(bare);
  const name = bare.toLowerCase().replace(/\.$/, '');
  // A single label ("router", "nas") is completed by the resolver's search domains: a LAN name.
  return name === 'localhost' || !name.includes('.') || LOCAL_SUFFIXES.some((s) => name.endsWith(s));
}

/**
 * May this image URL go to the AI provider? On success `url` is what to send: an http(s) URL in
 * its parsed form, so the model server reads the very host checked here however its own URL
 * parser treats odd spellings (backslashes, numeric hosts); a data URL as given.
 */
export function checkImageUrl(raw: string, policy: ImageUrlPolicy): ImageUrlCheck {
  // Before parsing: a data URL can be megabytes, and its media type is all that matters here.
  if (/^\s*data:/i.test(raw)) return DATA_IMAGE.test(raw) ? { ok: true, url: raw } : { ok: false, reason: 'a data: URL must start data:image/...' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'must be a data:image/... or https: URL' };
  }
  const lan = policy.allowLan ? '' : ' (PARLEY_AI_IMAGE_ALLOW_LAN is off)';
  if (url.protocol === 'http:' && !policy.allowLan) return { ok: false, reason: `must be a data:image/... or https: URL, not http:${lan}` };
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: `must be a data:image/... or https: URL, not ${url.protocol}` };
  if (!policy.allowLan && isLocalHost(url.hostname)) return { ok: false, reason: `must name a public host, not ${url.hostname}${lan}` };
  return { ok: true, url: url.href };
}
