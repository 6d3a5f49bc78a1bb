// Regenerate docs/configuration.md from the settings table: `bun run scripts/gen-config-docs.ts`.
import { renderConfigDocs } from '../src/config-docs';
await Bun.write('docs/configuration.md', renderConfigDocs());
console.log('wrote docs/configuration.md');
