import { settingList } from './config';

/** docs/configuration.md, generated from the one settings table (test/config.test.ts keeps them equal). */
export function renderConfigDocs(): string {
  const rows = Object.values(settingList).map(
    (s) => `| \`${s.env}\` | ${s.flag ? `\`${s.flag}\`` : ''} | ${s.default === '' ? '(empty)' : `\`${s.default}\``} | ${s.doc.replace(/\|/g, '\\|')} |`,
  );
  return `# Configuration

Parley reads its settings once at start-up, from command-line flags, then environment variables,
then these defaults. An empty value (\`KEY=\` in an environment file) counts as not set: the
default applies. Numbers are plain decimal digits. Every CLI command also accepts \`--data-dir\`.

This file is generated from \`src/config.ts\` by \`bun run scripts/gen-config-docs.ts\`; a test fails
when the two differ.

| Variable | Flag | Default | Meaning |
|---|---|---|---|
${rows.join('\n')}
`;
}
