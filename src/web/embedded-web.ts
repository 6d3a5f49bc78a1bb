/** One of the web app's files carried by the compiled binary, read from the executable at start. */
export interface EmbeddedWebFile {
  /** URL path: `/index.html` or `/assets/<name>-<hash>.<ext>`. */
  path: string;
  type: string;
  /** A font or an image: compressed already, not worth gzipping. */
  compressed: boolean;
  /** Where the binary keeps its bytes (an embedded file's path). */
  file: string;
}

/**
 * The web app's files inside the compiled binary. Empty here: `scripts/build.ts` replaces this
 * module with one that lists the bundle's files, embedded as files (plugin `embedded-web`), so the
 * binary serves the app with no file beside it. Empty means development: the server bundles `web/` itself.
 */
export const embeddedWeb: readonly EmbeddedWebFile[] = [];
