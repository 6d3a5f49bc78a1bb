import { useEffect, useState } from 'preact/hooks';
import { call } from './api';

/** What the server offers beyond chat (`server/getCapabilities`, docs/api.md): the page shows only what works. */
export interface Capabilities {
  version: string;
  voice: { transcribe: boolean; speak: boolean; maxRecordingBytes: number };
  files: { maxBytes: number; maxFiles: number; quotaBytes: number; semanticSearch: boolean };
  imageGeneration: boolean;
  webSearch: boolean;
  memory: { maxPerUser: number };
}

let asked: Promise<Capabilities | undefined> | undefined;

/** Asked once per page load (they change only when the server restarts); undefined when the server could not say. */
export function capabilities(): Promise<Capabilities | undefined> {
  return (asked ??= call<Capabilities>('server/getCapabilities').catch(() => ((asked = undefined), undefined)));
}

export function useCapabilities(): Capabilities | undefined {
  const [caps, setCaps] = useState<Capabilities>();
  useEffect(() => void capabilities().then(setCaps), []);
  return caps;
}
