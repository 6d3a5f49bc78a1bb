import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { operations } from '../src/app';

/**
 * The web app says only what the server does. Its words about the server are checked against
 * the operations the server has: every operation a page calls exists; every feature a page
 * names is backed by the operations listed for it here; and no page says the server cannot yet
 * do something (the Settings page once said memories were not kept, long after they were).
 * Which features show at all on a server is a matter of server/getCapabilities (the browser
 * tests check the microphone and "Read aloud" are absent without a speech server).
 */
const webSrc = join(import.meta.dir, '..', 'web', 'src');
const sources = await Promise.all(
  [...new Bun.Glob('**/*.{ts,tsx}').scanSync(webSrc)].map(async (path) => ({ path, text: await Bun.file(join(webSrc, path)).text() })),
);
const known = new Set<string>(operations.map((op) => op.path));

/** A feature as a page words it, and the operations that must exist for the words to be true. */
const CLAIMS: { words: RegExp; needs: string[] }[] = [
  { words: /remembers facts|Remember things across conversations|Forget everything/, needs: ['memories/listMemories', 'memories/addMemory', 'memories/updateMemory', 'memories/deleteMemory', 'memories/deleteAllMemories'] },
  { words: /Read aloud/, needs: ['audio/speak'] },
  { words: /Transcribing|Stop recording/, needs: ['audio/transcribe'] },
  { words: /Search your documents/, needs: ['files/searchFiles'] },
  { words: /By meaning/, needs: ['files/searchFiles', 'server/getCapabilities'] },
  { words: /Drop files to upload|Attach file/, needs: ['files/upload', 'files/listFiles'] },
  { words: /Send to support/, needs: ['support/createThread', 'support/sendMessage', 'support/getThread'] },
  { words: /Good answer|Bad answer/, needs: ['feedback/setFeedback', 'feedback/deleteFeedback', 'feedback/getFeedback'] },
  { words: /Regenerate/, needs: ['chat/branchConversation', 'chat/truncateConversationFromItem', 'chat/stream'] },
  { words: /Open canvas/, needs: ['widget/get', 'widget/getOrCreateThread', 'widget/addThreadMessage'] },
  { words: /What's new/, needs: ['releaseNotes/list'] },
  { words: /No news yet/, needs: ['news/list', 'news/markRead'] },
  { words: /Export all as/, needs: ['chat/listConversations', 'chat/getConversation'] },
  { words: /Import from ChatGPT/, needs: ['chat/importConversation'] },
  { words: /Offer to share/, needs: ['chat/shareConversation', 'chat/listSentShares', 'chat/withdrawShare'] },
  { words: /Offered to you/, needs: ['chat/listPendingShares', 'chat/acceptShare', 'chat/declineShare'] },
  { words: /Add a connection/, needs: ['admin/listConnections', 'admin/addConnection', 'admin/updateConnection', 'admin/removeConnection', 'admin/testConnection'] },
  { words: /Look for servers on this machine/, needs: ['admin/discoverServers', 'admin/addConnection'] },
  { words: /Save defaults/, needs: ['admin/listModelSettings', 'admin/setModelSettings', 'admin/setDefaultModels'] },
];

/** What a page must never say of the server: that it cannot do something yet. */
const NOT_YET = /\b(does not yet|doesn't yet|not yet (saved|kept|supported|available)|coming soon|isn't available yet)\b/i;

describe('what the web app says the server does', () => {
  test('every operation a page calls is one the server has', () => {
    const called = new Set<string>();
    for (const { text } of sources) {
      for (const m of text.matchAll(/\b(?:call(?:<[^>]*>)?|post)\(\s*'([a-zA-Z]+\/[a-zA-Z]+)'/g)) called.add(m[1]!);
      for (const m of text.matchAll(/['`]\/api\/([a-zA-Z]+\/[a-zA-Z]+)['`]/g)) called.add(m[1]!);
    }
    expect(called.size).toBeGreaterThan(40);
    expect([...called].filter((op) => !known.has(op))).toEqual([]);
  });

  test('every feature a page names is backed by its operations', () => {
    const all = sources.map((s) => s.text).join('\n');
    for (const claim of CLAIMS) {
      // A claim no page makes any more is stale here: the list follows the pages.
      expect({ claim: claim.words.source, made: claim.words.test(all) }).toEqual({ claim: claim.words.source, made: true });
      expect({ claim: claim.words.source, missing: claim.needs.filter((op) => !known.has(op)) }).toEqual({ claim: claim.words.source, missing: [] });
    }
  });

  test('no page says the server cannot do something yet', () => {
    const said = sources.flatMap(({ path, text }) => text.split('\n').flatMap((line, i) => (NOT_YET.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : [])));
    expect(said).toEqual([]);
  });

  test('no emoji in the app: a system without an emoji font shows an empty box (controls use the inline icons of shared/icons.tsx)', async () => {
    const styles = await Promise.all([...new Bun.Glob('**/*.css').scanSync(webSrc)].map(async (path) => ({ path, text: await Bun.file(join(webSrc, path)).text() })));
    const emoji = [...sources, ...styles].flatMap(({ path, text }) => text.split('\n').flatMap((line, i) => (/\p{Extended_Pictographic}/u.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : [])));
    expect(emoji).toEqual([]);
  });

  test('the check would have caught the old Settings wording', () => {
    expect(NOT_YET.test("Your choice is kept for when this server remembers facts across chats; it does not yet, so nothing is saved either way.")).toBe(true);
  });
});
