import type { WebFile } from './bundle-web';

/**
 * The web app's files inside the compiled binary. Empty here: `scripts/build.ts` replaces this
 * module with one that holds the bundle (plugin `embedded-web`), so the binary serves the app
 * with no file beside it. Empty means development: the server bundles `web/` itself.
 */
export const embeddedWeb: readonly WebFile[] = [];
