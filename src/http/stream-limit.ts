/**
 * Counts the event streams each user holds open, so one user cannot pin unbounded sockets and
 * memory. Generic: any streaming operation can take a slot. State lives in the object the caller
 * keeps in AppDeps, never in this module.
 */
export interface OpenStreams {
  /** Take a slot for `userId`; `undefined` when the user is at the limit, else the release function (idempotent). */
  acquire(userId: string): (() => void) | undefined;
  count(userId: string): number;
}

export function createOpenStreams(maxPerUser: number): OpenStreams {
  const open = new Map<string, number>();
  return {
    acquire(userId) {
      const n = open.get(userId) ?? 0;
      if (n >= maxPerUser) return undefined;
      open.set(userId, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (open.get(userId) ?? 1) - 1;
        if (left <= 0) open.delete(userId);
        else open.set(userId, left);
      };
    },
    count: (userId) => open.get(userId) ?? 0,
  };
}
