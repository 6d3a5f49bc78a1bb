import type { AppDeps } from '../deps';
import { forgetAllCredentials, forgetCredentials, onCredentialsChanged } from './credential-cache';

/** Bus topic: a user's credentials changed on one instance (a key revoked, a session ended, the user changed). */
export const CREDENTIALS_TOPIC = 'credentials:changed';

/**
 * Credential changes across instances (docs/scaling.md): every change made here is told to the
 * other instances, whose caches forget that user's entries and whose open streams of a revoked
 * credential end (src/auth/credential-watch.ts). When the bus may have lost messages, every
 * cached credential is forgotten. Only for a bus shared by several instances. Returns the stopper.
 */
export function startCredentialRelay(deps: Pick<AppDeps, 'bus' | 'store' | 'instanceId'>): () => void {
  const offChanges = onCredentialsChanged((userId, from) => {
    if (userId !== undefined && from === 'here') deps.bus.publish(CREDENTIALS_TOPIC, { userId, from: deps.instanceId });
  });
  const offTopic = deps.bus.subscribe<{ userId?: unknown; from?: unknown }>(CREDENTIALS_TOPIC, (message) => {
    // The bus hands this instance its own messages too.
    if (message?.from === deps.instanceId || typeof message?.userId !== 'string') return;
    forgetCredentials(message.userId, 'elsewhere');
  });
  const offGap = deps.bus.onGap(() => forgetAllCredentials(deps.store));
  return () => {
    offChanges();
    offTopic();
    offGap();
  };
}
