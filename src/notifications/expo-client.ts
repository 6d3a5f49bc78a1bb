import type { Expo } from 'expo-server-sdk';
import { exportExpoBaseUrl, type Config } from '../config';

/** The part of the SDK's client Parley uses (tests may wrap it). */
export type PushClient = Pick<Expo, 'chunkPushNotifications' | 'sendPushNotificationsAsync' | 'chunkPushNotificationReceiptIds' | 'getPushNotificationReceiptsAsync'>;

let loadedWith: { baseUrl: string | undefined } | undefined;

/**
 * Build the Expo client. expo-server-sdk reads `EXPO_BASE_URL` exactly once, when its module is
 * first evaluated, and offers no option for it. So the module is imported dynamically here, after
 * the configured `PARLEY_EXPO_BASE_URL` has been copied into `EXPO_BASE_URL` (by src/config.ts,
 * the one module that touches the environment). A second client in the same process must
 * therefore use the same base URL (tests share one fake push service).
 */
export async function createExpoClient(config: Pick<Config, 'expoBaseUrl' | 'expoAccessToken' | 'pushRetryMinMs'>): Promise<PushClient> {
  if (!loadedWith) {
    exportExpoBaseUrl(config);
    loadedWith = { baseUrl: config.expoBaseUrl };
  } else if (loadedWith.baseUrl !== config.expoBaseUrl) {
    throw new Error(`the Expo SDK is already loaded with base URL ${loadedWith.baseUrl ?? '(default)'}; it cannot change within a process`);
  }
  const { Expo } = await import('expo-server-sdk');
  return new Expo({ accessToken: config.expoAccessToken, retryMinTimeout: config.pushRetryMinMs });
}
