import pkg from '../package.json' with { type: 'json' };

// Injected by scripts/build.ts (`--define PARLEY_COMMIT=...`); absent when running from source.
declare const PARLEY_COMMIT: string | undefined;

export const VERSION: string = pkg.version;
export const COMMIT: string = typeof PARLEY_COMMIT === 'string' ? PARLEY_COMMIT : 'dev';

/** `parley 0.1.0 (commit 1a2b3c4)`: what `parley --version` prints. */
export const versionLine = (): string => `parley ${VERSION} (commit ${COMMIT})`;
