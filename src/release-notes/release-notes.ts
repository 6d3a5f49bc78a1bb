import changelogText from '../../CHANGELOG.md' with { type: 'text' };
import { compareVersions, parseChangelog, type Changelog, type Release } from './changelog';

let parsed: Changelog | undefined;

/** The changelog this binary was built with, read once. */
export function builtInChangelog(): Changelog {
  return (parsed ??= parseChangelog(changelogText));
}

/** Released versions newest first; with `since`, only those strictly newer than it. */
export function releasesSince(changelog: Changelog, since?: string): Release[] {
  return since === undefined ? changelog.releases : changelog.releases.filter((r) => compareVersions(r.version, since) > 0);
}
