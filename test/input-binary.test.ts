import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBinaryServer, type BinaryServer } from './support/binary-server';
import { compareDocumentedFields } from './support/documented-fields';

// Spawns the compiled binary; a shared machine may be slow. No timing is asserted.
setDefaultTimeout(120_000);

/** Input validation as the compiled binary applies it (src/http/body.ts). */
describe('the compiled binary: input rules', () => {
  let server: BinaryServer;
  beforeAll(async () => {
    server = await startBinaryServer();
  });
  afterAll(() => server?.stop());

  const json = async (path: string, body: unknown) => {
    const res = await server.post(path, body);
    return { status: res.status, body: (await res.json()) as any };
  };

  test('a number given as a string is a 400, and a number\'s bounds hold (limit "0" was a 500, "1000000" listed everything)', async () => {
    // Conversations to list: chat/stream makes one before it reports that no AI provider is set up.
    for (let i = 0; i < 3; i++) await (await server.post('chat/stream', { message: `hello ${i}` })).text();
    expect((await json('chat/listConversations', {})).body.conversations).toHaveLength(3);
    for (const limit of ['0', '1000000', '2', 0, 101]) {
      const res = await json('chat/listConversations', { limit });
      expect({ limit, status: res.status, path: res.body.data?.issues?.[0]?.path }).toEqual({ limit, status: 400, path: ['limit'] });
    }
    expect((await json('chat/listConversations', { limit: 2 })).body.conversations).toHaveLength(2);
  });

  test('an unknown field is accepted and ignored (a client of a newer interface keeps working); a known field of the wrong type is not', async () => {
    const updated = await json('preferences/update', { enableMemories: true, futureField: { nested: [1] } });
    expect(updated).toEqual({ status: 200, body: { enableMemories: true, showMemoryToolOutput: false } });
    const group = await json('groupChat/createGroupChat', { name: 'Trip', color: 'teal' });
    expect(group.status).toBe(200);
    expect(group.body.name).toBe('Trip');
    const wrong = await json('preferences/update', { enableMemories: 'yes', futureField: 1 });
    expect({ status: wrong.status, paths: wrong.body.data.issues.map((i: any) => i.path) }).toEqual({ status: 400, paths: [['enableMemories']] });
  });

  test('/api/openapi.json says what validation enforces: integer amounts, non-blank names, the Expo token format, bounds', async () => {
    const openapi = await (await fetch(`${server.url}/api/openapi.json`)).json();
    expect(await compareDocumentedFields(openapi, json)).toEqual([]);
  });
});
