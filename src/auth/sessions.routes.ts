import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { forbidden } from '../http/errors';
import { findSessionById, listActiveSessions, revokeSession } from './auth.store';
import { clearedSessionCookie } from './authenticate';
import { SessionSchema, sessionView } from './sessions.view';

export const sessionOperations = [
  defineOperation({
    path: 'auth/listSessions',
    summary: "The caller's active sessions, most recently used first",
    description: 'Revoked and expired sessions are left out. Never includes the tokens.',
    input: t.Object({}),
    output: t.Object({ sessions: t.Array(SessionSchema) }),
    handler: async ({ user, principal, deps }) => {
      const current = principal.credential.kind === 'session' ? principal.credential.sessionId : undefined;
      return { sessions: (await deps.store.read((tx) => listActiveSessions(tx, user.id, deps.now()))).map((s) => sessionView(s, current)) };
    },
  }),
  defineOperation({
    path: 'auth/revokeSession',
    summary: "End one of the caller's sessions (sign out another device)",
    description:
      'A session the caller does not own, or that does not exist, answers 403. Revoking twice succeeds. Revoking the calling session also clears the session cookie.',
    input: t.Object({ sessionId: t.String() }),
    output: t.Object({ success: t.Boolean() }),
    errors: [403],
    handler: async ({ user, principal, input, deps, responseHeaders }) => {
      const session = await deps.store.read((tx) => findSessionById(tx, input.sessionId));
      if (!session || session.userId !== user.id) throw forbidden();
      await deps.store.write((tx) => revokeSession(tx, session.id, deps.now()));
      if (principal.credential.kind === 'session' && principal.credential.sessionId === session.id)
        responseHeaders['set-cookie'] = clearedSessionCookie(deps.config.cookieSecure);
      return { success: true };
    },
  }),
];
