import { t } from 'elysia';
import { defineOperation } from '../http/operation';
import { AppError } from '../http/errors';
import { iso } from '../ids';
import { UserSchema, userWithAdminView } from '../account/account.view';
import { hasAdmin } from '../account/account.store';
import { AdminRefusal } from '../admin/user-admin';
import { openBrowserSession } from '../auth/browser-session';
import { sessionCookie, SESSION_COOKIE_MAX_AGE_S } from '../auth/authenticate';
import { checkSetupToken, createFirstAdmin, SetupRefused, type SetupRefusalReason } from './first-admin';

// The first run in a browser (docs/auth.md, "The first admin"): while the server has no admin,
// `parley serve` prints a one-time setup link; its page (web/src/setup/) checks the link, then
// creates the first admin, who is signed in by the answer's cookie.

const REFUSALS: Record<SetupRefusalReason, { code: 'NOT_FOUND' | 'GONE'; message: string }> = {
  unknown: { code: 'NOT_FOUND', message: 'This setup link is not valid. Check that the whole link was copied, or make a new one with `parley setup-link`.' },
  used: { code: 'GONE', message: 'This setup link was already used: a setup link works once. Sign in instead.' },
  expired: { code: 'GONE', message: 'This setup link has expired. Make a new one with `parley setup-link`, or restart `parley serve`.' },
  done: { code: 'GONE', message: 'This server already has an admin. Sign in instead; an admin makes sign-in links with `parley login-link`.' },
};

/** A refusal as the API answers it: 404 for a link Parley never made, 410 for one no longer good; `data.reason` says which. */
async function refusing<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof SetupRefused) {
      const { code, message } = REFUSALS[err.reason];
      throw new AppError(code, { message, data: { reason: err.reason } });
    }
    if (err instanceof AdminRefusal) throw new AppError(err.kind === 'conflict' ? 'CONFLICT' : 'BAD_REQUEST', { message: err.message });
    throw err;
  }
}

const Token = t.String({ maxLength: 200, description: 'The token from the setup link (`#token=…` in its fragment).' });
const REFUSED = '404 (`data.reason: "unknown"`) for a token Parley did not make; 410 when it was used (`used`), has expired (`expired`), or the server already has an admin (`done`).';

export const setupOperations = [
  defineOperation({
    path: 'setup/getStatus',
    public: true,
    summary: 'Whether the server still waits for its first admin',
    description:
      'Public. `needsSetup: true` while no user is an admin: the sign-in page then says where the setup link is (the console of `parley serve`, or `parley setup-link`). Nothing else about the server is told.',
    input: t.Object({}),
    output: t.Object({ needsSetup: t.Boolean() }),
    handler: async ({ deps }) => ({ needsSetup: !(await deps.store.read((tx) => hasAdmin(tx))) }),
  }),
  defineOperation({
    path: 'setup/checkToken',
    public: true,
    summary: 'Whether a setup link can still be used (nothing is used up)',
    description: `Public. The setup page asks this before showing its form. ${REFUSED}`,
    input: t.Object({ token: Token }),
    output: t.Object({ expiresAt: t.String({ format: 'date-time' }) }),
    errors: [404, 410],
    handler: ({ input, deps }) => refusing(async () => ({ expiresAt: iso((await deps.store.read((tx) => checkSetupToken(tx, input.token, deps.now()))).expiresAt) })),
  }),
  defineOperation({
    path: 'setup/createAdmin',
    public: true,
    summary: 'Use a setup link up: create the first admin and sign them in',
    description: `Public; the token is the credential. Creates the user as an admin — or, when a user already has that e-mail address, makes that user the admin (their name unchanged) — opens a session and sets the \`parley_session\` cookie, as a login link does. The link works once. ${REFUSED} A malformed e-mail address is 400.`,
    input: t.Object({
      token: Token,
      name: t.String({ minLength: 1, maxLength: 200 }),
      email: t.String({ minLength: 3, maxLength: 320 }),
    }),
    output: t.Object({ user: UserSchema }),
    errors: [404, 410],
    handler: async ({ input, deps, request, responseHeaders }) => {
      const { user, tokenId, existing } = await refusing(() => deps.store.write((tx) => createFirstAdmin(tx, input.token, input, deps.now())));
      const { token, row } = await openBrowserSession(deps, request, user.id);
      deps.log.info('first admin', { via: 'setup link', userId: user.id, existingUser: existing, sessionId: row.id, setupId: tokenId });
      responseHeaders['set-cookie'] = sessionCookie(token, SESSION_COOKIE_MAX_AGE_S, deps.config.cookieSecure);
      return { user: userWithAdminView(user, deps.now()) };
    },
  }),
];
