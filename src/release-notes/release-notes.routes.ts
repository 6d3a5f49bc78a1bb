import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { VERSION } from '../version';
import { SECTION_KINDS, SEMVER_PATTERN } from './changelog';
import { builtInChangelog, releasesSince } from './release-notes';

const ReleaseSchema = t.Object({
  version: t.String(),
  date: t.String({ format: 'date', description: 'The release date, `YYYY-MM-DD`.' }),
  sections: t.Array(
    t.Object({
      kind: t.Union(SECTION_KINDS.map((k) => t.Literal(k))),
      items: t.Array(t.String({ description: 'One change, in Markdown.' })),
    }),
  ),
});

export const releaseNotesOperations = [
  defineOperation({
    path: 'releaseNotes/list',
    summary: "What changed in each of Parley's versions, newest first",
    description:
      'From the CHANGELOG.md the server was built with. `since` (a semantic version such as `0.3.0`) keeps only the versions strictly newer than it, ' +
      'e.g. the version an app last showed notes for; a version newer than every release gives an empty list. `currentVersion` is the running server\'s.',
    input: t.Object({ since: t.Optional(t.String({ pattern: SEMVER_PATTERN, maxLength: 64, description: 'A semantic version, without a leading `v`.' })) }),
    output: t.Object({ currentVersion: t.String(), releases: t.Array(ReleaseSchema) }),
    handler: ({ input }) => ({ currentVersion: VERSION, releases: releasesSince(builtInChangelog(), input.since) }),
  }),
];
