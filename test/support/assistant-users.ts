import { createTestContext, type TestContext, type TestUser } from '../helpers';
import type { Config } from '../../src/config';
import { updateUser } from '../../src/account/account.store';
import type { fakeAiForFile } from './fake-ai-for-file';

/** The assistants tests' server: chat through the fake OpenAI server (and web search through the fake SearxNG), no rate limits in the way. */
export const assistantsConfig = (fakes: ReturnType<typeof fakeAiForFile>, extra: Partial<Config> = {}): Partial<Config> => ({
  aiProvider: 'openai-chat',
  aiBaseUrl: fakes.openai.url,
  aiModel: 'small',
  searchProvider: 'searxng',
  searxngUrl: fakes.searxng.url,
  rateLimitAi: { capacity: 1000, perMs: 1000 },
  rateLimitWrite: { capacity: 1000, perMs: 1000 },
  ...extra,
});

/** That server with three users: Ada the admin, Ann and Bob. */
export async function assistantsContext(
  fakes: ReturnType<typeof fakeAiForFile>,
  extra: Partial<Config> = {},
  opts: { durable?: boolean } = {},
): Promise<{ ctx: TestContext; admin: TestUser; ann: TestUser; bob: TestUser }> {
  const ctx = await createTestContext({
    ...opts,
    users: [
      { email: 'admin@example.org', name: 'Ada' },
      { email: 'ann@example.org', name: 'Ann' },
      { email: 'bob@example.org', name: 'Bob' },
    ],
    config: assistantsConfig(fakes, extra),
  });
  const [admin, ann, bob] = ctx.users as [TestUser, TestUser, TestUser];
  await ctx.store.write((tx) => updateUser(tx, admin.user.id, { isAdmin: true }, Date.now()));
  return { ctx, admin, ann, bob };
}
