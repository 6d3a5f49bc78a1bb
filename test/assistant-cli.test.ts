import { afterAll, expect, test } from 'bun:test';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transformer } from '@napi-rs/image';
import { createTestContext, describeSqliteOnly } from './helpers';
import { modelList, startFakeOpenAI } from './fakes/openai';
import { openDatabase } from '../src/db/connection';
import { updateUser } from '../src/account/account.store';

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

  test('knowledge files and MCP servers: an admin\'s documents and servers only, shown as they are now', async () => {
    const kdir = mkdtempSync(join(tmpdir(), 'parley-cli-assistant-k-'));
    const k = ['--data-dir', kdir];
    // The app on the CLI's own database file: an admin and a user upload a document each.
    const ctx = await createTestContext({ db: openDatabase(join(kdir, 'parley.db')), users: [{ email: 'admin@example.org', name: 'Admin' }, { email: 'ann@example.org', name: 'Ann' }], config: { dataDir: kdir } });
    const [admin, ann] = ctx.users;
    await ctx.store.write((tx) => updateUser(tx, admin!.user.id, { isAdmin: true }, Date.now()));
    const upload = async (as: typeof admin, text: string) => {
      const form = new FormData();
      form.append('file', new Blob([text]), 'notes.txt');
      const res = await ctx.app.handle(new Request('http://localhost/api/files/upload', { method: 'POST', headers: { 'x-api-key': as!.key }, body: form }));
      expect(res.status).toBe(200);
      return ((await res.json()) as { id: string }).id;
    };
    const handbook = await upload(admin, 'Staff handbook.');
    const annsNotes = await upload(ann, 'Ann notes.');
    const server = await parley(['mcp', 'add', 'docs', '--url', 'https://mcp.example.org/mcp', '--json', ...k]);
    expect(server.err).toBe('');
    const serverId = JSON.parse(server.out).id;

    const refused = await parley(['assistant', 'create', '--name', 'Helpdesk', '--knowledge', `${handbook},${annsNotes}`, '--mcp-servers', `${serverId},nope`, ...k]);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain(`knowledgeFileIds.1: No document ${annsNotes} of an admin's`);
    expect(refused.err).toContain('mcpServerIds.1: No MCP server nope');
    expect(refused.err).not.toContain('knowledgeFileIds.0');

    const made = await parley(['assistant', 'create', '--name', 'Helpdesk', '--knowledge', handbook, '--mcp-servers', serverId, '--json', ...k]);
    expect(made.err).toBe('');
    const a = JSON.parse(made.out);
    expect(a).toMatchObject({ knowledgeFileIds: [handbook], mcpServerIds: [serverId] });
    expect((await parley(['assistant', 'list', ...k])).out).toContain(`${a.id}  Helpdesk  everyone  default model  knowledge 1  mcp 1`);
    // What its users see through the API is the same.
    expect((await ctx.json('assistants/get', { assistantId: a.id }, ann)).body.assistant).toMatchObject({ knowledgeFileIds: [handbook], mcpServerIds: [serverId] });

    const set = await parley(['assistant', 'set', '--id', a.id, '--knowledge', 'none', '--mcp-servers', 'all', '--json', ...k]);
    expect(JSON.parse(set.out)).toMatchObject({ knowledgeFileIds: [], mcpServerIds: null });
    expect(JSON.parse((await parley(['assistant', 'set', '--id', a.id, '--mcp-servers', 'none', '--json', ...k])).out)).toMatchObject({ mcpServerIds: [] });
    await ctx.close();
  }, 90_000);
});
