import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transformer } from '@napi-rs/image';
import { describeSqliteOnly } from './helpers';
import { modelList, startFakeOpenAI } from './fakes/openai';

const root = new URL('..', import.meta.url).pathname;
const ai = startFakeOpenAI();
ai.gets['/v1/models'] = modelList(['small', 'large']);
afterAll(() => ai.stop());

/** Run the CLI from source, with a chat connection from the settings (the model check asks its catalogue). */
async function parley(args: string[]) {
  const env = { PATH: process.env.PATH ?? '', PARLEY_AI_PROVIDER: 'openai-chat', PARLEY_AI_BASE_URL: ai.url, PARLEY_AI_MODEL: 'small', PARLEY_LOG_LEVEL: 'error' };
  const p = Bun.spawn([process.execPath, join(root, 'cli/main.ts'), ...args], { env, stdout: 'pipe', stderr: 'pipe' });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}

// `parley assistant` (docs/assistants.md, "CLI"): the shared assistants, through the API's validators and model check.
describeSqliteOnly('parley assistant', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-cli-assistant-'));
  const d = ['--data-dir', dir];

  test('create, list, set, remove shared assistants; refusals in the API\'s words', async () => {
    const png = join(dir, 'star.png');
    writeFileSync(png, await Transformer.fromRgbaPixels(new Uint8Array(64 * 32 * 4).fill(200), 64, 32).png());
    const made = await parley(['assistant', 'create', '--name', 'House', '--instructions', 'Be brief.', '--model', 'env-ai/large', '--starter', 'Hello?', '--starter', 'Why?', '--tiers', 'PRO', '--temperature', '0.5', '--avatar', png, '--json', ...d]);
    expect(made.err).toBe('');
    const a = JSON.parse(made.out);
    expect(a).toMatchObject({ name: 'House', instructions: 'Be brief.', model: 'env-ai/large', starters: ['Hello?', 'Why?'], visibility: 'tiers', tiers: ['PRO'], parameters: { temperature: 0.5, topP: null, maxOutputTokens: null }, avatarUrl: expect.stringContaining('/avatar?v='), tools: null, shared: true });
    expect((await parley(['assistant', 'list', ...d])).out).toContain(`${a.id}  House  tiers PRO  env-ai/large  avatar`);

    const badModel = await parley(['assistant', 'create', '--name', 'X', '--model', 'env-ai/nope', ...d]);
    expect(badModel.code).toBe(2);
    expect(badModel.err).toContain('model:');
    const badTemperature = await parley(['assistant', 'create', '--name', 'X', '--temperature', '3', ...d]);
    expect(badTemperature.code).toBe(2);
    expect(badTemperature.err).toContain('parameters.temperature');
    expect((await parley(['assistant', 'create', '--name', ' ', ...d])).err).toContain('name');

    // One setting changes that one; the others stay.
    const set = await parley(['assistant', 'set', '--id', a.id, '--top-p', '0.9', '--tiers', 'everyone', '--tools', 'history,canvas', '--no-avatar', '--json', ...d]);
    expect(set.err).toBe('');
    expect(JSON.parse(set.out)).toMatchObject({ parameters: { temperature: 0.5, topP: 0.9, maxOutputTokens: null }, visibility: 'everyone', tiers: [], tools: ['history', 'canvas'], avatarUrl: null });
    expect(JSON.parse((await parley(['assistant', 'set', '--id', a.id, '--temperature', 'none', '--model', 'default', '--json', ...d])).out)).toMatchObject({ parameters: { temperature: null, topP: 0.9, maxOutputTokens: null }, model: null });

    expect((await parley(['assistant', 'remove', '--id', a.id, ...d])).out).toContain('removed shared assistant House');
    expect((await parley(['assistant', 'list', ...d])).out.trim()).toBe('no shared assistants');
    const gone = await parley(['assistant', 'set', '--id', a.id, '--name', 'Y', ...d]);
    expect(gone.code).toBe(2);
    expect(gone.err).toContain(`no shared assistant ${a.id}`);
  }, 90_000);
});
