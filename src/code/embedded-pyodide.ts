/**
 * Pyodide's files carried by the executable: scripts/build.ts replaces this list with the
 * zstd-compressed files it embeds. Empty when Parley runs from source (pyodide-dir.ts then reads
 * the npm package).
 */
export const embeddedPyodide: { name: string; path: string }[] = [];
