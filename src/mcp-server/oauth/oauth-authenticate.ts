import type { AppDeps } from '../../deps';
import type { Authenticated } from '../../auth/authenticate';

export async function authenticateOAuthAccess(_deps: AppDeps, _token: string, _now: number): Promise<{ auth: Authenticated; expiresAt: number; clientId: string; scopes: string[] } | undefined> {
  return undefined;
}
