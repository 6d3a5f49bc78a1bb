/**
 * CHANGELOG.md (Keep a Changelog: `## [x.y.z] - YYYY-MM-DD` sections with `### Added`-style
 * lists) read into versions. The file is the one source: the binary carries it as text
 * (release-notes.ts) and the release notes operation serves what this makes of it.
 */

export const SECTION_KINDS = ['added', 'changed', 'deprecated', 'removed', 'fixed', 'security'] as const;
export type SectionKind = (typeof SECTION_KINDS)[number];

export interface ReleaseSection {
  kind: SectionKind;
  /** Markdown, one entry per list item (a wrapped item's lines joined with a space). */
  items: string[];
}

export interface Release {
  version: string;
  /** `YYYY-MM-DD`, as written. */
  date: string;
  sections: ReleaseSection[];
}

export interface Changelog {
  /** What the `## [Unreleased]` section lists: not served, kept for the checks. */
  unreleased: ReleaseSection[];
  /** Newest first, as the file lists them. */
  releases: Release[];
}

/** Semantic versioning 2.0.0's version (no leading `v`). */
export const SEMVER_PATTERN = '^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(-[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?(\\+[0-9A-Za-z-]+(\\.[0-9A-Za-z-]+)*)?$';
const SEMVER = new RegExp(SEMVER_PATTERN);

/** Semantic versioning's precedence: -1, 0 or 1 (Bun's own comparison, prereleases below their release). */
export function compareVersions(a: string, b: string): number {
  if (!SEMVER.test(a) || !SEMVER.test(b)) throw new Error(`not a semantic version: ${SEMVER.test(a) ? b : a}`);
  return Bun.semver.order(a, b);
}

const RELEASE_HEADING = /^## \[([^\]]+)\] - (\d{4}-\d{2}-\d{2})$/;
const UNRELEASED_HEADING = /^## \[Unreleased\]$/;
const SECTION_HEADING = /^### (\w+)$/;
const LINK_DEFINITION = /^\[[^\]]+\]: \S+$/;

/**
 * Parse the whole file or throw naming the line: a changelog this cannot read must fail the
 * tests (test/release-notes.test.ts), not ship notes with an entry silently missing.
 */
export function parseChangelog(text: string): Changelog {
  const out: Changelog = { unreleased: [], releases: [] };
  let sections: ReleaseSection[] | undefined;
  let section: ReleaseSection | undefined;
  let item: string[] | undefined;
  const endItem = () => {
    if (item) section!.items.push(item.join(' '));
    item = undefined;
  };
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trimEnd();
    const fail = (why: string): never => {
      throw new Error(`CHANGELOG.md line ${i + 1}: ${why}: ${JSON.stringify(raw)}`);
    };
    if (line.startsWith('## ')) {
      endItem();
      section = undefined;
      if (UNRELEASED_HEADING.test(line)) {
        if (out.unreleased.length || out.releases.length) fail('[Unreleased] must be the first section');
        sections = out.unreleased;
        return;
      }
      const m = RELEASE_HEADING.exec(line) ?? fail('expected "## [x.y.z] - YYYY-MM-DD"');
      const [, version, date] = m as unknown as [string, string, string];
      if (!SEMVER.test(version)) fail('not a semantic version');
      if (Number.isNaN(Date.parse(`${date}T00:00:00Z`)) || new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date) fail('not a date');
      const previous = out.releases.at(-1);
      if (previous && compareVersions(previous.version, version) <= 0) fail('versions must be listed newest first, each once');
      const release: Release = { version, date, sections: [] };
      out.releases.push(release);
      sections = release.sections;
      return;
    }
    if (line.startsWith('### ')) {
      endItem();
      if (!sections) fail('a list outside a version');
      const kind = SECTION_HEADING.exec(line)?.[1]?.toLowerCase() as SectionKind | undefined;
      if (!kind || !SECTION_KINDS.includes(kind)) fail(`the kinds are ${SECTION_KINDS.join(', ')}`);
      if (sections!.some((s) => s.kind === kind)) fail('a kind twice in one version');
      section = { kind: kind!, items: [] };
      sections!.push(section);
      return;
    }
    if (!sections) return; // the title and introduction above the first version
    if (line === '') return endItem();
    if (LINK_DEFINITION.test(line)) return endItem();
    if (line.startsWith('- ')) {
      if (!section) fail('an entry outside an Added/Changed/... list');
      endItem();
      item = [line.slice(2).trim()];
      return;
    }
    if (item && /^\s+\S/.test(line)) {
      item.push(line.trim());
      return;
    }
    fail('expected a "- " entry, or its continuation indented');
  });
  endItem();
  for (const r of out.releases) if (!r.sections.some((s) => s.items.length)) throw new Error(`CHANGELOG.md: version ${r.version} lists no change`);
  return out;
}
