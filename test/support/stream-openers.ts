/**
 * How to open each event-stream operation from outside (used by the shutdown test against a
 * spawned server, and by scripts/fault/soak.ts). One row per SSE operation: given a way to call
 * the API as a user, return the input that opens that user's stream. When an SSE operation has
 * no row, the shutdown test says so and uses another one.
 */
export type Api = (path: string, body: unknown) => Promise<any>;

export const streamOpeners: Record<string, (api: Api) => Promise<unknown>> = {
  'groupChat/subscribeToGroup': async (api) => ({ groupChatId: (await api('groupChat/createGroupChat', { name: 'stream test' })).id }),
};
