import type { Expo } from 'expo-server-sdk';
import expoSdkPackage from 'expo-server-sdk/package.json' with { type: 'json' };
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
    embedSdkPackageJson();
    loadedWith = { baseUrl: config.expoBaseUrl };
  } else if (loadedWith.baseUrl !== config.expoBaseUrl) {
    throw new Error(`the Expo SDK is already loaded with base URL ${loadedWith.baseUrl ?? '(default)'}; it cannot change within a process`);
  }
  const { Expo } = await import('expo-server-sdk');
  return new Expo({ accessToken: config.expoAccessToken, retryMinTimeout: config.pushRetryMinMs });
}

/**
 * The SDK reads its own version for the User-Agent with `createRequire(import.meta.url)('../package.json')`
 * on every request. Inside the compiled executable there is no such file (`Cannot find module
 * '../package.json' from /$bunfs/root/parley`), so every push would fail. A runtime resolver
 * answers that one require from the package.json embedded at build time; it only acts on
 * modules inside the executable (`/$bunfs/`), never when running from source.
 */
function embedSdkPackageJson(): void {
  Bun.plugin({
    name: 'parley-expo-sdk-package-json',
    setup(build) {
      build.onResolve({ filter: /^\.\.\/package\.json$/ }, (args) =>
        args.importer.startsWith('/$bunfs/') || args.importer.startsWith('B:/~BUN/') ? { path: 'expo-server-sdk', namespace: 'parley-embedded-package' } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'parley-embedded-package' }, () => ({
        exports: { name: expoSdkPackage.name, version: expoSdkPackage.version },
        loader: 'object',
      }));
    },
  });
}
