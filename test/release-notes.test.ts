import { describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import pkg from '../package.json' with { type: 'json' };
import { createTestContext, SPEC_ERRORS } from './helpers';
import { compareVersions, parseChangelog } from '../src/release-notes/changelog';
import { builtInChangelog, releasesSince } from '../src/release-notes/release-notes';

const fileText = readFileSync(new URL('../CHANGELOG.md', import.meta.url), 'utf8');

describe('CHANGELOG.md', () => {
  test('parses, and its newest released version is the one in package.json', () => {
    const changelog = parseChangelog(fileText);
    expect(changelog.releases.length).toBeGreaterThan(0);
    expect(changelog.releases[0]!.version, 'add a "## [x.y.z] - YYYY-MM-DD" section for the version in package.json').toBe(pkg.version);
    // Unreleased work is listed, and not served.
    expect(changelog.unreleased.flatMap((s) => s.items).length).toBeGreaterThan(0);
  });

  test('the server reads the same file, once', () => {
    expect(builtInChangelog()).toEqual(parseChangelog(fileText));
    expect(builtInChangelog()).toBe(builtInChangelog());
  });
});

describe('reading a changelog', () => {
  const sample = [
    '# Changelog',
    '',
    'Some words, [a link](https://example.org) and `### Added` inline.',
    '',
    '## [Unreleased]',
    '',
    '### Added',
    '',
    '- Soon.',
    '',
    '## [0.10.0] - 2027-03-01',
    '',
    '### Added',
    '',
    '- A long entry',
    '  wrapped over two lines.',
    '- `code` and **bold** stay Markdown.',
    '',
    '### Fixed',
    '- A fix.',
    '',
    '## [0.10.0-beta.1] - 2027-02-01',
    '',
    '### Security',
    '',
    '- Closed a hole.',
    '',
    '## [0.9.0] - 2027-01-01',
    '',
    '### Removed',
    '',
    '- Something old.',
    '',
    '[0.10.0]: https://example.org/compare/v0.9.0...v0.10.0',
    '',
  ].join('\n');

  test('versions newest first, kinds in lower case, wrapped entries joined', () => {
    const c = parseChangelog(sample);
    expect(c.unreleased).toEqual([{ kind: 'added', items: ['Soon.'] }]);
    expect(c.releases).toEqual([
      {
        version: '0.10.0',
        date: '2027-03-01',
        sections: [
          { kind: 'added', items: ['A long entry wrapped over two lines.', '`code` and **bold** stay Markdown.'] },
          { kind: 'fixed', items: ['A fix.'] },
        ],
      },
      { version: '0.10.0-beta.1', date: '2027-02-01', sections: [{ kind: 'security', items: ['Closed a hole.'] }] },
      { version: '0.9.0', date: '2027-01-01', sections: [{ kind: 'removed', items: ['Something old.'] }] },
    ]);
  });

  test('since: strictly newer, by semantic versioning (0.10 after 0.9, a prerelease before its release)', () => {
    const c = parseChangelog(sample);
    const since = (v?: string) => releasesSince(c, v).map((r) => r.version);
    expect(since()).toEqual(['0.10.0', '0.10.0-beta.1', '0.9.0']);
    expect(since('0.9.0')).toEqual(['0.10.0', '0.10.0-beta.1']);
    expect(since('0.10.0-beta.1')).toEqual(['0.10.0']);
    expect(since('0.10.0')).toEqual([]);
    expect(since('1.0.0')).toEqual([]);
    expect(since('0.0.1')).toHaveLength(3);
    expect(compareVersions('1.2.3+build.5', '1.2.3')).toBe(0);
    expect(() => compareVersions('1.2', '1.2.0')).toThrow('not a semantic version');
  });

  test('anything else is refused with its line, so a change cannot go missing silently', () => {
    const refused = (text: string) => {
      try {
        parseChangelog(text);
        return '';
      } catch (err) {
        return (err as Error).message;
      }
    };
    const release = (heading: string, ...body: string[]) => ['# Changelog', '', heading, '', ...body].join('\n');
    expect(refused(release('## [0.1.0] - 2026-11-26', '### Added', '- ok'))).toBe('');
    expect(refused(release('## 0.1.0 - 2026-11-26', '### Added', '- x'))).toContain('line 3: expected "## [x.y.z] - YYYY-MM-DD"');
    expect(refused(release('## [0.1] - 2026-11-26', '### Added', '- x'))).toContain('not a semantic version');
    expect(refused(release('## [v0.1.0] - 2026-11-26', '### Added', '- x'))).toContain('not a semantic version');
    expect(refused(release('## [0.1.0] - 2026-02-30', '### Added', '- x'))).toContain('not a date');
    expect(refused(release('## [0.1.0] - 2026-11-26', '### Improved', '- x'))).toContain('line 5: the kinds are');
    expect(refused(release('## [0.1.0] - 2026-11-26', '- x'))).toContain('outside an Added/Changed');
    expect(refused(release('## [0.1.0] - 2026-11-26', '### Added', '* x'))).toContain('line 6: expected a "- " entry');
    expect(refused(release('## [0.1.0] - 2026-11-26', '### Added', '- x', '### Added', '- y'))).toContain('a kind twice');
    expect(refused(release('## [0.1.0] - 2026-11-26', '### Added'))).toContain('version 0.1.0 lists no change');
    expect(refused(release('## [0.1.0] - 2026-11-26', '### Added', '- x', '', '## [0.2.0] - 2026-12-01', '### Added', '- y'))).toContain('newest first');
    expect(refused(release('## [0.1.0] - 2026-11-26', '### Added', '- x', '', '## [0.1.0] - 2026-11-26', '### Added', '- y'))).toContain('newest first');
    expect(refused(release('## [0.1.0] - 2026-11-26', '### Added', '- x', '', '## [Unreleased]', '### Added', '- y'))).toContain('[Unreleased] must be the first');
  });
});

const ctx = await createTestContext({ users: [{ email: 'ann@example.org' }] });
const ann = ctx.users[0]!;

describe('releaseNotes/list', () => {
  const served = parseChangelog(fileText).releases;

  test('every released version, newest first, with the running version', async () => {
    const res = await ctx.json('releaseNotes/list', {}, ann);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ currentVersion: pkg.version, releases: served });
    expect(res.body.releases[0].sections[0]).toEqual({ kind: 'added', items: expect.any(Array) });
  });

  test('since keeps the versions strictly newer', async () => {
    expect((await ctx.json('releaseNotes/list', { since: '0.0.0' }, ann)).body.releases).toEqual(served);
    expect((await ctx.json('releaseNotes/list', { since: pkg.version }, ann)).body).toEqual({ currentVersion: pkg.version, releases: [] });
    expect((await ctx.json('releaseNotes/list', { since: '99.0.0' }, ann)).body.releases).toEqual([]);
  });

  test('a since that is not a semantic version is 400 naming it; no credential is 401', async () => {
    for (const since of ['0.1', 'v0.1.0', 'latest', '01.0.0', '', ' 0.1.0']) {
      const res = await ctx.json('releaseNotes/list', { since }, ann);
      expect({ since, status: res.status, paths: res.body.data?.issues?.map((i: any) => i.path) }).toEqual({ since, status: 400, paths: [['since']] });
    }
    expect((await ctx.json('releaseNotes/list', { since: 1 }, ann)).status).toBe(400);
    expect(await ctx.json('releaseNotes/list', {})).toMatchObject({ status: 401, body: SPEC_ERRORS[401] });
  });
});
