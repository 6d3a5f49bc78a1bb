import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBinaryServer, type BinaryServer } from './support/binary-server';
import { answerChecker, inputOnlyTypes, responseSchemas } from './support/output-schemas';

// The second hardening round through the compiled executable: what its answers document, what
// its reports and logs print, where its keys and its fetches go. These spawn processes; shared
// machines can be slow, and nothing here asserts on time.
setDefaultTimeout(120_000);

describe('the compiled binary: /api/openapi.json documents what is sent', () => {
  let server: BinaryServer;
  beforeAll(async () => {
    server = await startBinaryServer();
  });
  afterAll(() => server?.stop());

  test('no response schema types a count as a string (memberCount, unreadCount, bytes were `anyOf: [string/integer, integer]`), and real answers validate', async () => {
    const doc: any = await (await fetch(`${server.url}/api/openapi.json`)).json();
    expect(responseSchemas(doc).flatMap(({ where, schema }) => inputOnlyTypes(schema, where))).toEqual([]);
    const check = answerChecker(doc);
    const answer = async (path: string, body: unknown) => {
      const res = await server.post(path, body);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      const json = await res.json();
      expect(check(path, json)).toEqual([]);
      return json as any;
    };
    await answer('groupChat/createGroupChat', { name: 'Trip' });
    expect((await answer('groupChat/listGroupChats', {})).groupChats[0].memberCount).toBe(1);
    expect((await answer('news/list', {})).unreadCount).toBe(0);
    expect((await answer('support/createThread', { subject: 'Help', message: 'It broke' })).thread.unreadCount).toBe(0);
    await answer('support/listThreads', {});
  });
});
