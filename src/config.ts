/**
 * The one table of settings. Every row names its environment variable, its CLI flag (if any),
 * its default, a line of documentation and a parser. `loadConfig` is the only place in Parley
 * that reads the environment; everything else receives the parsed `Config`.
 * docs/configuration.md is generated from this table (`bun run scripts/gen-config-docs.ts`)
 * and a test fails when the two drift apart.
 */

import { parseRate } from './http/rate-limit';

export class ConfigError extends Error {}

const wrapConfigError = <T>(fn: () => T): T => {
  try {
    return fn();
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
};

type Parser<T> = (raw: string, name: string) => T;

const str: Parser<string> = (raw) => raw;
const optStr: Parser<string | undefined> = (raw) => (raw === '' ? undefined : raw);
const int =
  (min: number, max = Number.MAX_SAFE_INTEGER): Parser<number> =>
  (raw, name) => {
    // Digits only: Number() would also read "0x1F90", "1e3" or "" (as 0).
    const n = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isInteger(n) || n < min || n > max)
      throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
    return n;
  };
const bool: Parser<boolean> = (raw, name) => {
  const v = raw.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};
const oneOf =
  <const T extends string>(...values: T[]): Parser<T> =>
  (raw, name) => {
    if ((values as string[]).includes(raw)) return raw as T;
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  };
const list: Parser<string[]> = (raw) =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export interface Setting<T> {
  env: string;
  flag?: string;
  default: string;
  doc: string;
  parse: Parser<T>;
  /** Hidden from generated docs (none yet); secrets are still documented, their values never logged. */
  secret?: boolean;
}

const setting = <T>(s: Setting<T>) => s;

export const settings = {
  dataDir: setting({
    env: 'PARLEY_DATA_DIR',
    flag: '--data-dir',
    default: './data',
    doc: 'Directory holding the SQLite database (parley.db) and its WAL files.',
    parse: str,
  }),
  databaseUrl: setting({
    env: 'PARLEY_DATABASE_URL',
    default: '',
    doc: 'PostgreSQL (15 or later) as the database instead of SQLite: `postgres://user:password@host:5432/database`. The server and the admin commands use it, and several instances may share it; `parley backup` and `restore` refuse (use `pg_dump` and `pg_restore`). See docs/scaling.md.',
    parse: optStr,
    secret: true,
  }),
  redisUrl: setting({
    env: 'PARLEY_REDIS_URL',
    default: '',
    doc: "Redis or Valkey (`redis://host:6379`) to carry realtime events between several instances on PostgreSQL, instead of PostgreSQL's LISTEN/NOTIFY: for a cluster whose fan-out outgrows the database (docs/scaling.md). Unused on SQLite, which serves one instance.",
    parse: optStr,
    secret: true,
  }),
  databasePool: setting({
    env: 'PARLEY_DATABASE_POOL',
    default: '10',
    doc: "Connections the server keeps open to PostgreSQL at most (with PARLEY_DATABASE_URL). Each instance has its own pool: keep the sum of the instances' pools under the server's `max_connections`.",
    parse: int(1, 1000),
  }),
  host: setting({
    env: 'PARLEY_HOST',
    flag: '--host',
    default: '127.0.0.1',
    doc: 'Address the HTTP server listens on. Use 0.0.0.0 to listen on every interface.',
    parse: str,
  }),
  port: setting({
    env: 'PARLEY_PORT',
    flag: '--port',
    default: '8787',
    doc: 'TCP port the HTTP server listens on (0 picks a free port).',
    parse: int(0, 65535),
  }),
  env: setting({
    env: 'PARLEY_ENV',
    default: 'production',
    doc: '`production` or `development`. Development enables test-only operations such as `credits/grantAdReward`.',
    parse: oneOf('production', 'development'),
  }),
  internalEmailDomain: setting({
    env: 'PARLEY_INTERNAL_EMAIL_DOMAIN',
    default: '',
    doc: 'E-mail domain of internal users (e.g. `example.org`); they may call internal test operations. Empty: nobody.',
    parse: (raw) => optStr(raw.trim().toLowerCase().replace(/^@/, ''), 'PARLEY_INTERNAL_EMAIL_DOMAIN'),
  }),
  cookieSecure: setting({
    env: 'PARLEY_COOKIE_SECURE',
    default: 'false',
    doc: 'Mark the session cookie `Secure` (set to true when Parley is served over HTTPS).',
    parse: bool,
  }),
  logLevel: setting({
    env: 'PARLEY_LOG_LEVEL',
    default: 'info',
    doc: '`debug`, `info`, `warn`, `error` or `silent`. Request lines are logged at `info`.',
    parse: oneOf('debug', 'info', 'warn', 'error', 'silent'),
  }),
  maxBodyBytes: setting({
    env: 'PARLEY_MAX_BODY_BYTES',
    default: String(32 * 1024 * 1024),
    doc: 'Largest request body accepted, in bytes; larger bodies get 413 PAYLOAD_TOO_LARGE.',
    parse: int(1024),
  }),
  sessionTtlDays: setting({
    env: 'PARLEY_SESSION_TTL_DAYS',
    default: '30',
    doc: 'Sessions expire after this many days without use (sliding expiry).',
    parse: int(1, 3650),
  }),
  // --- reliability ---
  rateLimitAi: setting({
    env: 'PARLEY_RATE_LIMIT_AI',
    default: '20/min',
    doc: 'Per user and operation, for operations that call an AI provider (chat, deep research, image generation): `N/s`, `N/min`, `N/hour` or `off`. Over the limit: 429 with `Retry-After`.',
    parse: (raw, name) => wrapConfigError(() => parseRate(raw, name)),
  }),
  rateLimitWrite: setting({
    env: 'PARLEY_RATE_LIMIT_WRITE',
    default: '120/min',
    doc: 'Per user and operation, for operations marked as frequent writes (e.g. sending group messages). Same format as `PARLEY_RATE_LIMIT_AI`.',
    parse: (raw, name) => wrapConfigError(() => parseRate(raw, name)),
  }),
  maxStreamsPerUser: setting({
    env: 'PARLEY_MAX_STREAMS_PER_USER',
    default: '16',
    doc: 'Event streams one user may hold open at once (0: no cap). One more is refused with 429 and `Retry-After`.',
    parse: int(0, 100_000),
  }),
  // --- per-user caps on what users create (docs/security.md, "Caps on what a user creates") ---
  apiKeysMaxPerUser: setting({
    env: 'PARLEY_API_KEYS_MAX_PER_USER',
    default: '50',
    doc: 'API keys one user may hold unrevoked (`auth/createApiKey`); one more: 409. Admins making keys for users are not held to it.',
    parse: int(1, 1_000_000),
  }),
  groupsMaxPerUser: setting({
    env: 'PARLEY_GROUPS_MAX_PER_USER',
    default: '100',
    doc: 'Group chats one user may belong to, made or joined (`groupChat/createGroupChat`, `groupChat/joinGroup`); one more: 409.',
    parse: int(1, 1_000_000),
  }),
  groupInvitesMaxPerUser: setting({
    env: 'PARLEY_GROUP_INVITES_MAX_PER_USER',
    default: '50',
    doc: 'Unexpired group invite codes one user may have made (`groupChat/createInvite`); one more: 409 until some expire (`PARLEY_GROUP_INVITE_TTL_HOURS`).',
    parse: int(1, 1_000_000),
  }),
  bookmarkGroupsMaxPerUser: setting({
    env: 'PARLEY_BOOKMARK_GROUPS_MAX_PER_USER',
    default: '100',
    doc: 'Bookmark groups one user may keep (`bookmarks/createGroup`); one more: 409.',
    parse: int(1, 1_000_000),
  }),
  bookmarksMaxPerUser: setting({
    env: 'PARLEY_BOOKMARKS_MAX_PER_USER',
    default: '2000',
    doc: 'Bookmarks one user may keep in all their groups (`bookmarks/addItem`); one more: 409.',
    parse: int(1, 10_000_000),
  }),
  feedbackMaxPerUser: setting({
    env: 'PARLEY_FEEDBACK_MAX_PER_USER',
    default: '10000',
    doc: 'Answers one user may have rated (`feedback/setFeedback` on an answer not rated yet; changing a rating always works); one more: 409.',
    parse: int(1, 100_000_000),
  }),
  branchesMaxPerUser: setting({
    env: 'PARLEY_BRANCHES_MAX_PER_USER',
    default: '500',
    doc: 'Branched conversations one user may keep (`chat/branchConversation`, which copies the items); one more: 409.',
    parse: int(1, 1_000_000),
  }),
  importsMaxPerUser: setting({
    env: 'PARLEY_IMPORTS_MAX_PER_USER',
    default: '5000',
    doc: 'Imported conversations one user may keep (`chat/importConversation`); one more: 409 (deleting imported conversations makes room).',
    parse: int(1, 10_000_000),
  }),
  importQuotaBytes: setting({
    env: 'PARLEY_IMPORT_QUOTA_BYTES',
    default: String(256 * 1024 * 1024),
    doc: "Bytes one user's imported conversations may hold together: each message's content in UTF-8 plus 256 for its row, and the title; an import past it: 409 (deleting imported conversations makes room).",
    parse: int(1024),
  }),
  pushTokensMaxPerUser: setting({
    env: 'PARLEY_PUSH_TOKENS_MAX_PER_USER',
    default: '20',
    doc: "Push tokens (devices) one user may have registered; registering one more drops the user's least recently registered token.",
    parse: int(1, 10_000),
  }),
  sharesMaxPendingPerUser: setting({
    env: 'PARLEY_SHARES_MAX_PENDING_PER_USER',
    default: '100',
    doc: "Shares one user may have offered that are not accepted yet (`chat/shareConversation`; declined ones count until withdrawn); one more: 409.",
    parse: int(1, 1_000_000),
  }),
  // --- widget threads (docs/extras.md) ---
  widgetMessageMaxBytes: setting({
    env: 'PARLEY_WIDGET_MESSAGE_MAX_BYTES',
    default: String(64 * 1024),
    doc: "Largest widget thread message (`widget/addThreadMessage`'s `data`, in bytes of its JSON); larger: 413.",
    parse: int(256, 16 * 1024 * 1024),
  }),
  widgetThreadMaxMessages: setting({
    env: 'PARLEY_WIDGET_THREAD_MAX_MESSAGES',
    default: '1000',
    doc: 'Messages one widget thread may hold; one more: 409 (archive the thread to start a new one).',
    parse: int(1, 10_000_000),
  }),
  widgetThreadMaxBytes: setting({
    env: 'PARLEY_WIDGET_THREAD_MAX_BYTES',
    default: String(4 * 1024 * 1024),
    doc: "Bytes of messages one widget thread may hold (each message's JSON); a message past it: 409.",
    parse: int(1024),
  }),
  widgetUserMaxMessages: setting({
    env: 'PARLEY_WIDGET_USER_MAX_MESSAGES',
    default: '10000',
    doc: "Messages one user's widget threads may hold together, archived ones included; one more: 409 (`widget/deleteThread` frees room).",
    parse: int(1, 100_000_000),
  }),
  widgetUserMaxBytes: setting({
    env: 'PARLEY_WIDGET_USER_MAX_BYTES',
    default: String(32 * 1024 * 1024),
    doc: "Bytes of messages one user's widget threads may hold together, archived ones included; a message past it: 409.",
    parse: int(1024),
  }),
  widgetThreadsMaxPerUser: setting({
    env: 'PARLEY_WIDGET_THREADS_MAX_PER_USER',
    default: '200',
    doc: 'Widget threads one user may keep, archived ones included; one more (`widget/getOrCreateThread` making a thread): 409.',
    parse: int(1, 1_000_000),
  }),
  fetchAllowPrivate: setting({
    env: 'PARLEY_FETCH_ALLOW_PRIVATE',
    default: 'false',
    doc: 'Let server-side fetches (pages read during deep research, webhooks) reach private, loopback and link-local addresses. Leave false on a public server.',
    parse: bool,
  }),
  fetchAllowHosts: setting({
    env: 'PARLEY_FETCH_ALLOW_HOSTS',
    default: '',
    doc: 'Comma-separated host names or IP addresses that server-side fetches may reach even when they resolve to private addresses (e.g. `searxng.lan,192.168.1.20`).',
    parse: list,
  }),
  // --- web app ---
  web: setting({
    env: 'PARLEY_WEB',
    default: 'true',
    doc: 'Serve the web app at `/` (chat in a browser; its files are inside the binary). `false`: the API alone, and `/` answers the JSON 404.',
    parse: bool,
  }),
  // --- oauth ---
  appUrl: setting({
    env: 'PARLEY_APP_URL',
    default: '',
    doc: 'Where the browser goes after signing in with an identity provider or a login link (errors add `?error=<code>`). Empty: the web app at `/` when it is served (`PARLEY_WEB`), else a small result page.',
    parse: optHttpUrl,
  }),
  publicUrl: setting({
    env: 'PARLEY_PUBLIC_URL',
    default: '',
    doc: 'The address users reach Parley at (e.g. `https://parley.example.org`), used to build OAuth callback URLs. Needed to sign in with an identity provider: empty, sign-in answers a `no_public_url` page (the request\'s own Host header is never trusted for it).',
    parse: optHttpUrl,
  }),
  signup: setting({
    env: 'PARLEY_SIGNUP',
    default: 'closed',
    doc: '`open`: a first sign-in with a verified e-mail creates the user (limited by `PARLEY_SIGNUP_ALLOW`). `closed`: only users that already exist (e.g. made with `parley user create`) can sign in.',
    parse: oneOf('open', 'closed'),
  }),
  signupAllow: setting({
    env: 'PARLEY_SIGNUP_ALLOW',
    default: '',
    doc: 'With open sign-up, comma-separated e-mails (`ann@example.org`) and domains (`@example.org`) that may sign up. Empty: any verified e-mail.',
    parse: (raw, name) => list(raw, name).map((s) => s.toLowerCase()),
  }),
  nativeRedirectSchemes: setting({
    env: 'PARLEY_NATIVE_REDIRECT_SCHEMES',
    default: '',
    doc: 'Comma-separated custom URL schemes (e.g. `myapp`) a native app may pass as `?redirect=` to receive its bearer token after signing in. Empty: none.',
    parse: redirectSchemes,
  }),
  oauthGithubClientId: oauthRow('GITHUB', 'GitHub', 'client id'),
  oauthGithubClientSecret: oauthRow('GITHUB', 'GitHub', 'client secret'),
  oauthGoogleClientId: oauthRow('GOOGLE', 'Google', 'client id'),
  oauthGoogleClientSecret: oauthRow('GOOGLE', 'Google', 'client secret'),
  oauthGiteaClientId: oauthRow('GITEA', 'Gitea', 'client id'),
  oauthGiteaClientSecret: oauthRow('GITEA', 'Gitea', 'client secret'),
  oauthGiteaBaseUrl: oauthRow('GITEA', 'Gitea', 'base URL', 'e.g. `https://gitea.example.org`'),
  oauthForgejoClientId: oauthRow('FORGEJO', 'Forgejo', 'client id'),
  oauthForgejoClientSecret: oauthRow('FORGEJO', 'Forgejo', 'client secret'),
  oauthForgejoBaseUrl: oauthRow('FORGEJO', 'Forgejo', 'base URL', 'e.g. `https://codeberg.org`'),
  oauthGitlabClientId: oauthRow('GITLAB', 'GitLab', 'client id'),
  oauthGitlabClientSecret: oauthRow('GITLAB', 'GitLab', 'client secret'),
  oauthGitlabBaseUrl: setting({
    env: 'PARLEY_OAUTH_GITLAB_BASE_URL',
    default: 'https://gitlab.com',
    doc: 'GitLab sign-in: base URL (change it for a self-managed GitLab).',
    parse: optHttpUrl,
  }),
  oauthKeycloakClientId: oauthRow('KEYCLOAK', 'Keycloak', 'client id'),
  oauthKeycloakClientSecret: oauthRow('KEYCLOAK', 'Keycloak', 'client secret'),
  oauthKeycloakBaseUrl: oauthRow('KEYCLOAK', 'Keycloak', 'base URL', 'the realm URL, e.g. `https://id.example.org/realms/main`'),
  oauthAuthentikClientId: oauthRow('AUTHENTIK', 'Authentik', 'client id'),
  oauthAuthentikClientSecret: oauthRow('AUTHENTIK', 'Authentik', 'client secret'),
  oauthAuthentikBaseUrl: oauthRow('AUTHENTIK', 'Authentik', 'base URL', 'e.g. `https://auth.example.org`'),
  // --- Parley as an MCP server (docs/mcp-server.md) ---
  mcpOAuthMaxPendingClients: setting({
    env: 'PARLEY_MCP_OAUTH_MAX_PENDING_CLIENTS',
    default: '1000',
    doc: 'OAuth client registrations of MCP clients (`/mcp/oauth/register`, open to anyone as MCP clients expect) that no user has allowed yet, at most; past it a registration answers 429 until the unused ones are deleted (a day after they registered). Keeps an anonymous flood from filling the disk.',
    parse: int(10, 1_000_000),
  }),
  // --- connections ---
  secretKey: setting({
    env: 'PARLEY_SECRET_KEY',
    default: '',
    doc: "The key that seals connections' credentials in the database (AES-256-GCM): 32 random bytes in base64 (`openssl rand -base64 32`). Empty: a key file `secret.key` in the data directory, made on first need (mode 0600). Instances on PostgreSQL that do not share a data directory each need this key, identical on all. Not in database backups: keep it with them (docs/connections.md).",
    parse: optStr,
    secret: true,
  }),
  secretKeyPrevious: setting({
    env: 'PARLEY_SECRET_KEY_PREVIOUS',
    default: '',
    doc: 'Earlier values of `PARLEY_SECRET_KEY`, comma-separated: credentials sealed with them stay readable until `parley connection rotate-key` seals them again with the current key (docs/connections.md, "Rotating the key").',
    parse: list,
    secret: true,
  }),
  // --- chat & research ---
  aiProvider: setting({
    env: 'PARLEY_AI_PROVIDER',
    default: 'none',
    doc: '`openai-responses` (OpenAI Responses API, background mode), `openai-chat` (any OpenAI-compatible Chat Completions server: Ollama, llama.cpp, vLLM, LM Studio, OpenRouter; Parley runs the research loop itself), `anthropic` (the Anthropic Messages API; `PARLEY_AI_BASE_URL` empty: `https://api.anthropic.com`) or `none` (no AI server from the environment: chat uses the connections an admin adds, docs/connections.md). Seeds the connection `env-ai` at each start.',
    parse: oneOf('openai-responses', 'openai-chat', 'anthropic', 'none'),
  }),
  aiBaseUrl: setting({
    env: 'PARLEY_AI_BASE_URL',
    default: '',
    doc: "Base URL of the AI provider's API including its version prefix (e.g. `http://127.0.0.1:11434/v1` for Ollama). Empty: OpenAI's.",
    parse: optStr,
  }),
  aiApiKey: setting({
    env: 'PARLEY_AI_API_KEY',
    default: '',
    doc: 'API key sent to the AI provider (local servers usually accept any value).',
    parse: optStr,
    secret: true,
  }),
  aiModel: setting({
    env: 'PARLEY_AI_MODEL',
    default: 'gpt-4.1-mini',
    doc: 'Model used for regular chat (`chat/stream`, group AI follow-ups) when the request names none.',
    parse: str,
  }),
  researchModel: setting({
    env: 'PARLEY_RESEARCH_MODEL',
    default: 'o4-mini-deep-research',
    doc: 'Model used for `chat/streamDeepResearch` when the request names none. With `openai-chat` use a model your server has.',
    parse: str,
  }),
  aiTools: setting({
    env: 'PARLEY_AI_TOOLS',
    default: 'auto',
    doc: '`openai-chat`: whether the model server is offered tools (canvas, history search, web search). `auto`: yes, unless it refuses them once (then that turn is retried without them, and no later turn offers them until Parley restarts). `on`: always. `off`: never.',
    parse: oneOf('auto', 'on', 'off'),
  }),
  aiVision: setting({
    env: 'PARLEY_AI_VISION',
    default: 'auto',
    doc: '`openai-chat`: whether images are sent to the model server. `auto`: yes, unless its `/props` (llama-server) says the model has no vision or it refuses an image once (then that turn is retried without images, the answer says so, and later turns leave images out until Parley restarts). `on`: always. `off`: never (the answer says an image was left out).',
    parse: oneOf('auto', 'on', 'off'),
  }),
  searchProvider: setting({
    env: 'PARLEY_SEARCH_PROVIDER',
    default: 'none',
    doc: 'Web search used by the `openai-chat` research loop and chat tool: `searxng` or `none`.',
    parse: oneOf('searxng', 'none'),
  }),
  searxngUrl: setting({
    env: 'PARLEY_SEARXNG_URL',
    default: 'http://127.0.0.1:8888',
    doc: 'Base URL of a SearxNG instance with the JSON format enabled (`search.formats: [html, json]`).',
    parse: str,
  }),
  streamKeepaliveS: setting({
    env: 'PARLEY_STREAM_KEEPALIVE_S',
    default: '15',
    doc: 'Seconds between `{"type":"keepalive"}` frames on a quiet chat or research stream. Checked at each heartbeat tick (`PARLEY_SSE_HEARTBEAT_S`), so rounded up to whole ticks; quiet ticks in between carry a comment line.',
    parse: int(1, 3600),
  }),
  eventRetentionDays: setting({
    env: 'PARLEY_EVENT_RETENTION_DAYS',
    default: '7',
    doc: 'Days the events of a finished response are kept for stream replay (`Last-Event-ID`, `chat/resumeStream`); the conversation items stay.',
    parse: int(1, 3650),
  }),
  // --- usage metering (docs/usage.md) ---
  usageEstimateOutputTokens: setting({
    env: 'PARLEY_USAGE_ESTIMATE_OUTPUT_TOKENS',
    default: '1000',
    doc: 'Output tokens a model call is assumed to use when its user\'s tier limits tokens: what is held of their allowance or credits before the call (its input is counted from the request), settled to what the provider reports after it.',
    parse: int(1, 1_000_000),
  }),
  usageRetentionDays: setting({
    env: 'PARLEY_USAGE_RETENTION_DAYS',
    default: '400',
    doc: 'Days the usage of each model call is kept (`usage/*`, `admin/getUsage`, `parley usage`); older rows are deleted by the hourly retention pass. 0 keeps them for ever.',
    parse: int(0, 100_000),
  }),
  v1ResponseRetentionHours: setting({
    env: 'PARLEY_V1_RESPONSE_RETENTION_HOURS',
    default: '24',
    doc: 'Hours a response of the OpenAI-compatible door (`/v1/responses`) made with `background: true` and not `store: true` is kept after it ends, with its events, for `GET /v1/responses/{id}` and resuming its stream; then it is deleted (docs/openai-api.md, "What is stored"). A stored one stays with its conversation; its events go after `PARLEY_EVENT_RETENTION_DAYS`.',
    parse: int(1, 8760),
  }),
  researchMaxPerUser: setting({
    env: 'PARLEY_RESEARCH_MAX_PER_USER',
    default: '2',
    doc: 'Concurrent AI tasks (research and chat responses) one user may run; more answer 429 before the stream.',
    parse: int(1, 1000),
  }),
  researchMaxTotal: setting({
    env: 'PARLEY_RESEARCH_MAX_TOTAL',
    default: '16',
    doc: 'Concurrent AI tasks on the whole server; more answer 429 before the stream.',
    parse: int(1, 100000),
  }),
  researchBreadth: setting({
    env: 'PARLEY_RESEARCH_BREADTH',
    default: '3',
    doc: '`openai-chat` research loop: search queries per round (and pages read per round).',
    parse: int(1, 10),
  }),
  researchDepth: setting({
    env: 'PARLEY_RESEARCH_DEPTH',
    default: '2',
    doc: '`openai-chat` research loop: rounds of search → read → follow-up queries.',
    parse: int(1, 5),
  }),
  aiIdleTimeoutS: setting({
    env: 'PARLEY_AI_IDLE_TIMEOUT_S',
    default: '180',
    doc: "`openai-chat`: seconds Parley waits for the AI server to send something (the first token, the next one, a non-streamed answer) before it stops the turn with an error saying so. Waiting for the first token counts: a big prompt on a Raspberry Pi-hosted model can take a minute before it. Replaces Bun's own silent 5-minute limit.",
    parse: int(5, 86400),
  }),
  aiContextTokens: setting({
    env: 'PARLEY_AI_CONTEXT_TOKENS',
    default: '0',
    doc: "`openai-chat`: the model's context window in tokens, for the context budget (older turns left out, tool definitions dropped, page extracts shortened so every request fits, with room for the answer). `0`: ask the server — llama-server's `/props`, vLLM's `/v1/models`, Ollama's `/api/ps` (else 2,048: set this to Ollama's `OLLAMA_CONTEXT_LENGTH`); other servers (OpenAI) get no budget unless this is set.",
    parse: int(0, 10_000_000),
  }),
  aiAnswerTokens: setting({
    env: 'PARLEY_AI_ANSWER_TOKENS',
    default: '0',
    doc: "`openai-chat`, with a known context window: the longest answer in tokens (`max_tokens`), always kept free in the window (at most half of it). `0`: a quarter of the window (at most 4,096) is kept free, and the answer may use whatever the prompt leaves (said as `max_tokens` only where the server counts tokens for Parley: llama-server).",
    parse: int(0, 10_000_000),
  }),
  aiImageAllowLan: setting({
    env: 'PARLEY_AI_IMAGE_ALLOW_LAN',
    default: 'false',
    doc: 'Let image URLs in chat and research requests be `http:` and name private, loopback or LAN hosts (for a model server on your network that fetches images from it). False: only `data:image/...` and `https:` URLs to public hosts reach the AI provider, which may fetch them. Leave false on a public server.',
    parse: bool,
  }),
  // --- memories (docs/memory.md) ---
  memoryMaxPerUser: setting({
    env: 'PARLEY_MEMORY_MAX_PER_USER',
    default: '200',
    doc: 'Memories a user may keep (`memories/addMemory` and the assistant\'s `save_memory` together); one more: 409 through the API, a refusal the model reads through the tool.',
    parse: int(1, 100_000),
  }),
  memoryPromptTokens: setting({
    env: 'PARLEY_MEMORY_PROMPT_TOKENS',
    default: '2000',
    doc: 'At most this many tokens (estimated on the safe side) of a user\'s memories go into a chat or research turn\'s system message: all of them while they fit, else the most recently updated. Where the model\'s context window is known (`PARLEY_AI_CONTEXT_TOKENS`, or asked of the server), a request that would not fit also cuts them to an eighth of the prompt\'s room before older turns are left out.',
    parse: int(50, 1_000_000),
  }),
  // --- tools (docs/architecture.md, "Tools") ---
  toolsMaxTokens: setting({
    env: 'PARLEY_TOOLS_MAX_TOKENS',
    default: '8000',
    doc: 'At most this many tokens (estimated) of tool definitions go into one turn\'s request: Parley\'s own tools take about 1,500; MCP servers may offer dozens more. Past it, whole sources are left out, the lowest priority first (MCP servers before Parley\'s own tools), and the log says which. The context budget may still leave every tool out of a request that would not fit the model\'s window (docs/ai-providers.md).',
    parse: int(0, 1_000_000),
  }),
  assistantsMaxPerUser: setting({
    env: 'PARLEY_ASSISTANTS_MAX_PER_USER',
    default: '100',
    doc: 'Assistants one user may keep of their own (`assistants/create`; shared ones, made by admins, do not count); one more: 409.',
    parse: int(1, 1_000_000),
  }),
  toolApprovalTimeoutS: setting({
    env: 'PARLEY_TOOL_APPROVAL_TIMEOUT_S',
    default: '600',
    doc: 'How long a call of an "ask first" tool waits for the user\'s answer (`chat/approveToolCall`) before it counts as denied and the model is told so (docs/chat.md, "Tool approval"). The turn keeps its place among the user\'s running turns meanwhile (`PARLEY_RESEARCH_MAX_PER_USER`).',
    parse: int(1, 86_400),
  }),
  // --- voice (docs/voice.md) ---
  sttBaseUrl: setting({
    env: 'PARLEY_STT_BASE_URL',
    default: '',
    doc: 'Speech to text (`audio/transcribe`): base URL of an OpenAI-compatible server with `/audio/transcriptions`, including its version prefix (`https://api.openai.com/v1`, `http://127.0.0.1:8000/v1` for Speaches). Empty: transcription is off (503 naming this setting); audio never goes to OpenAI unless this says so.',
    parse: optHttpUrl,
  }),
  sttApiKey: setting({
    env: 'PARLEY_STT_API_KEY',
    default: '',
    doc: 'API key sent to the speech-to-text server (local servers usually need none).',
    parse: optStr,
    secret: true,
  }),
  sttModel: setting({
    env: 'PARLEY_STT_MODEL',
    default: 'whisper-1',
    doc: 'Transcription model named in each request (`whisper-1`, `gpt-4o-transcribe`, `Systran/faster-whisper-small` on Speaches; whisper.cpp ignores it).',
    parse: str,
  }),
  sttMaxBytes: setting({
    env: 'PARLEY_STT_MAX_BYTES',
    default: String(25 * 1024 * 1024),
    doc: "Largest audio file `audio/transcribe` takes (OpenAI's own limit by default); larger: 413, refused from `Content-Length` before the body is read, or as soon as the upload passes it. The request's body limit is this plus 64 KiB, under `PARLEY_MAX_BODY_BYTES`. A transcription holds its audio in memory while the server works on it.",
    parse: int(1024),
  }),
  sttConcurrency: setting({
    env: 'PARLEY_STT_CONCURRENCY',
    default: '1',
    doc: 'Transcriptions (`audio/transcribe`) that run at once; more wait their turn, in order, before their upload is read, so a waiting one holds no audio. Each running one holds its recording in memory until the speech-to-text server answers (a 25 MB recording raised the server\'s peak by ~90 MB), minutes for a long recording on a small board: 1 suits a 1 GB board and a server that transcribes one recording at a time; raise it with the server\'s own parallelism. A request that waits longer than 45 s is answered 503 with `Retry-After`.',
    parse: int(1, 64),
  }),
  ttsBaseUrl: setting({
    env: 'PARLEY_TTS_BASE_URL',
    default: '',
    doc: 'Text to speech (`audio/speak`): base URL of an OpenAI-compatible server with `/audio/speech`, including its version prefix (`https://api.openai.com/v1`, `http://127.0.0.1:8880/v1` for Kokoro-FastAPI). Empty: speech is off (503 naming this setting).',
    parse: optHttpUrl,
  }),
  ttsApiKey: setting({
    env: 'PARLEY_TTS_API_KEY',
    default: '',
    doc: 'API key sent to the text-to-speech server (local servers usually need none).',
    parse: optStr,
    secret: true,
  }),
  ttsModel: setting({
    env: 'PARLEY_TTS_MODEL',
    default: 'tts-1',
    doc: 'Speech model named in each request (`tts-1`, `gpt-4o-mini-tts`, `kokoro` on Kokoro-FastAPI).',
    parse: str,
  }),
  ttsVoice: setting({
    env: 'PARLEY_TTS_VOICE',
    default: 'alloy',
    doc: "Voice used when a request names none (`alloy` on OpenAI; Kokoro's are named like `af_bella`).",
    parse: str,
  }),
  ttsMaxChars: setting({
    env: 'PARLEY_TTS_MAX_CHARS',
    default: '4096',
    doc: "Longest text `audio/speak` reads in one request, in characters (OpenAI's own limit by default); longer: 400. At most 10000, which fits the operation's 64 KiB body even with every character escaped.",
    parse: int(1, 10_000),
  }),
  // --- image generation tools (docs/files.md, "Image generation and editing") ---
  imagesBaseUrl: setting({
    env: 'PARLEY_IMAGES_BASE_URL',
    default: '',
    doc: 'Image generation and editing in chat and research (the `generate_image` and `edit_image` tools): base URL of an OpenAI-compatible images API with `/images/generations` and `/images/edits`, including its version prefix (`https://api.openai.com/v1`, LocalAI\'s or stable-diffusion.cpp\'s server `http://127.0.0.1:8080/v1`). Empty: the tools are not offered to the model.',
    parse: optHttpUrl,
  }),
  imagesApiKey: setting({ env: 'PARLEY_IMAGES_API_KEY', default: '', doc: 'API key sent to the images server (local servers usually need none).', parse: optStr, secret: true }),
  imagesModel: setting({
    env: 'PARLEY_IMAGES_MODEL',
    default: 'gpt-image-1',
    doc: 'Image model named in each request (`gpt-image-1`, `dall-e-3`; what LocalAI or stable-diffusion.cpp calls its model).',
    parse: str,
  }),
  codeInterpreter: setting({
    env: 'PARLEY_CODE_INTERPRETER',
    default: 'false',
    doc: "Whether the code interpreter (`run_python`, `run_javascript`, docs/code-interpreter.md) is on where an admin has not switched it in Admin → Tools (source `code`). An admin's switch there, on or off, wins at once, with no restart. Off by default: each running sandbox is a child process of about 170 MB.",
    parse: bool,
  }),
  codeMaxSandboxes: setting({
    env: 'PARLEY_CODE_MAX_SANDBOXES',
    default: '2',
    doc: 'At most this many Python sandboxes (the code interpreter, docs/code-interpreter.md) run at once; a turn that wants one more waits. Each is a child process of about 170–250 MB: 2 suits a 1 GB board.',
    parse: int(1, 64),
  }),
  codeMemoryMb: setting({
    env: 'PARLEY_CODE_MEMORY_MB',
    default: '320',
    doc: 'A sandbox whose memory (resident, the whole child process) passes this many MB is stopped and its code told so. Python itself takes about 170 MB of it; the heap of JavaScript (QuickJS) is capped at a quarter of it.',
    parse: int(200, 16_384),
  }),
  codeTimeoutS: setting({
    env: 'PARLEY_CODE_TIMEOUT_S',
    default: '30',
    doc: 'A run of code taking longer than this many seconds is stopped (the sandbox with it: the next call of the turn starts a fresh one).',
    parse: int(1, 3600),
  }),
  codeScratchMb: setting({
    env: 'PARLEY_CODE_SCRATCH_MB',
    default: '64',
    doc: "MB the files in a sandbox (the turn's attached files and what the code writes, all in the sandbox's memory) may hold together.",
    parse: int(1, 4096),
  }),
  pyodideDir: setting({
    env: 'PARLEY_PYODIDE_DIR',
    default: '',
    doc: "A directory holding Pyodide's core (pyodide.asm.mjs, pyodide.asm.wasm, python_stdlib.zip, pyodide-lock.json), of the version this Parley was built with, to use instead of the `pyodide` directory beside the executable (which install.sh and the release tarballs put there). `parley doctor` says where it looked and whether Python is available.",
    parse: optStr,
  }),
  pyodidePackagesDir: setting({
    env: 'PARLEY_PYODIDE_PACKAGES_DIR',
    default: '',
    doc: "A directory of Pyodide packages (their wheels and a pyodide-lock.json, as in a Pyodide release) that code may import, such as numpy or matplotlib. Without it only Python's standard library is there; nothing is ever downloaded.",
    parse: optStr,
  }),
  imagesSize: setting({
    env: 'PARLEY_IMAGES_SIZE',
    default: '1024x1024',
    doc: 'Size asked for, `WIDTHxHEIGHT` or `auto` (`1024x1024`, `1536x1024` and `1024x1536` on gpt-image-1; `1792x1024` on dall-e-3; `512x512` suits a small board\'s stable-diffusion.cpp).',
    parse: (raw, name) => {
      const v = raw.trim().toLowerCase();
      if (v !== 'auto' && !/^[1-9]\d{1,4}x[1-9]\d{1,4}$/.test(v)) throw new ConfigError(`${name} must be WIDTHxHEIGHT (e.g. 1024x1024) or auto, got "${raw}"`);
      return v;
    },
  }),
  imagesTimeoutS: setting({
    env: 'PARLEY_IMAGES_TIMEOUT_S',
    default: '300',
    doc: 'Seconds one image request (and the download of an image the server answers with a URL) may take before the tool gives up and tells the model so; a large image on a CPU-only server can take minutes.',
    parse: int(5, 3600),
  }),
  // --- video generation (docs/video.md): the connection's options override the first three ---
  videoModel: setting({
    env: 'PARLEY_VIDEO_MODEL',
    default: 'sora-2',
    doc: 'Video model a `video` connection names in each job when its options name none (`sora-2`, `sora-2-pro`, or what a compatible server calls its model).',
    parse: str,
  }),
  videoSeconds: setting({
    env: 'PARLEY_VIDEO_SECONDS',
    default: '4',
    doc: 'Length of a generated clip in seconds, sent as `seconds` when a `video` connection\'s options name none (OpenAI takes 4, 8 or 12; a longer clip costs more).',
    parse: int(1, 120),
  }),
  videoTimeoutS: setting({
    env: 'PARLEY_VIDEO_TIMEOUT_S',
    default: '900',
    doc: 'Seconds a video job may take from its creation to its download before the tool gives up and tells the model so (the job may still finish on the server; nothing more is downloaded).',
    parse: int(10, 3600),
  }),
  videoPollMs: setting({
    env: 'PARLEY_VIDEO_POLL_MS',
    default: '5000',
    doc: 'How often a running video job is asked how it stands (`GET /videos/{id}`).',
    parse: int(50, 60_000),
  }),
  videoMaxBytes: setting({
    env: 'PARLEY_VIDEO_MAX_BYTES',
    default: String(100 * 1024 * 1024),
    doc: 'Largest video kept: the download is streamed to disk and stopped past this many bytes (the video is then not kept; the user\'s quota counts it as any file).',
    parse: int(1),
  }),
  // --- semantic search of documents (docs/files.md, "Semantic search") ---
  embeddingsBaseUrl: setting({
    env: 'PARLEY_EMBEDDINGS_BASE_URL',
    default: '',
    doc: 'Semantic search of documents: base URL of an OpenAI-compatible server with `/embeddings`, including its version prefix (`https://api.openai.com/v1`, Ollama `http://127.0.0.1:11434/v1`, llama.cpp\'s `llama-server --embeddings` `http://127.0.0.1:8080/v1`). Documents\' chunks are embedded after their text is read, and `files/searchFiles` and the `search_files` tool rank by meaning as well as by words. Empty: full-text search only, and no text leaves the server for this.',
    parse: optHttpUrl,
  }),
  embeddingsApiKey: setting({ env: 'PARLEY_EMBEDDINGS_API_KEY', default: '', doc: 'API key sent to the embeddings server (local servers usually need none).', parse: optStr, secret: true }),
  embeddingsModel: setting({
    env: 'PARLEY_EMBEDDINGS_MODEL',
    default: 'text-embedding-3-small',
    doc: 'Embedding model named in each request (`text-embedding-3-small`; `nomic-embed-text` on Ollama; llama.cpp serves the one it loaded). Vectors remember their model: after a change, chunks are embedded again in the background and searched by meaning once they are.',
    parse: str,
  }),
  embeddingsDimensions: setting({
    env: 'PARLEY_EMBEDDINGS_DIMENSIONS',
    default: '0',
    doc: "Length of the vectors asked for (`dimensions`; text-embedding-3 models can shorten theirs, e.g. 512 or 256), 0 for the model's own. Search time and the database's size grow with it: 1536 floats take 8 KB a chunk, 384 take 2 KB (docs/files.md has the measured times).",
    parse: int(0, 8192),
  }),
  embeddingsBatch: setting({
    env: 'PARLEY_EMBEDDINGS_BATCH',
    default: '32',
    doc: 'Chunks (about 500 tokens each) sent in one embeddings request. Lower it for a small local server that refuses or times out on large requests.',
    parse: int(1, 2048),
  }),
  embeddingsTimeoutS: setting({
    env: 'PARLEY_EMBEDDINGS_TIMEOUT_S',
    default: '60',
    doc: "Seconds one embeddings request for a document's chunks may take; a failed request leaves the chunks for a later pass (full-text search works meanwhile). A search's own query waits at most 15 seconds; then a hybrid search answers by words alone (a semantic one: 502).",
    parse: int(1, 3600),
  }),
  embeddingsIndexMb: setting({
    env: 'PARLEY_EMBEDDINGS_INDEX_MB',
    default: '64',
    doc: "Memory for the semantic search index: the sign bits of each chunk's vector, kept per document between searches (52 bytes a chunk at 384 dimensions, 196 at 1,536: 64 MB hold about 1.2 million and 340,000 chunks). Documents that do not fit have their bits read from the database at every search, slower (logged once, shown by `admin/doctor`; docs/files.md, \"Semantic search\"). 0: no index, every search reads every document's bits.",
    parse: int(0, 65536),
  }),
  // --- widgets, credits, images, push ---
  newsBodyMaxChars: setting({
    env: 'PARLEY_NEWS_BODY_MAX_CHARS',
    default: '10000',
    doc: 'Longest body (Markdown, in characters) of a news post; `parley news post` refuses a longer one. A page of `news/list` carries at most 50 posts.',
    parse: int(1, 1_000_000),
  }),
  adRewardMaxAmount: setting({
    env: 'PARLEY_AD_REWARD_MAX_AMOUNT',
    default: '1000',
    doc: 'Largest `amount` one `credits/grantAdReward` call may grant; larger amounts answer 400.',
    parse: int(1),
  }),
  filesMaxBytes: setting({
    env: 'PARLEY_FILES_MAX_BYTES',
    default: String(25 * 1024 * 1024),
    doc: 'Largest file one upload may carry (`files/upload`); larger: 413, the upload stops reading there and keeps nothing. `PARLEY_MAX_BODY_BYTES` caps the whole request too: raise both for larger files (an upload streams to disk: a 100 MB one takes about 30 MB of memory at its peak, bench/RESULTS.md "Files").',
    parse: int(1),
  }),
  filesMaxPerUser: setting({
    env: 'PARLEY_FILES_MAX_PER_USER',
    default: '1000',
    doc: 'Files a user may keep (uploads and generated images); one more: 409 `CONFLICT` with `data.reason` `quota`.',
    parse: int(1),
  }),
  filesQuotaBytes: setting({
    env: 'PARLEY_FILES_QUOTA_BYTES',
    default: String(1024 * 1024 * 1024),
    doc: "Total bytes of a user's files (each file counts, even when identical bytes are stored once); an upload past it: 409.",
    parse: int(1),
  }),
  filesS3Bucket: setting({
    env: 'PARLEY_FILES_S3_BUCKET',
    default: '',
    doc: 'Keep file contents in this bucket of an S3-compatible object store instead of `<data dir>/files` (needed with several instances unless they share a disk).',
    parse: optStr,
  }),
  filesS3Endpoint: setting({
    env: 'PARLEY_FILES_S3_ENDPOINT',
    default: '',
    doc: 'The object store\'s URL (MinIO, Garage, Ceph, R2...); empty: AWS S3 of `PARLEY_FILES_S3_REGION`.',
    parse: optStr,
  }),
  filesS3Region: setting({ env: 'PARLEY_FILES_S3_REGION', default: '', doc: 'The bucket\'s region (empty: the client\'s default).', parse: optStr }),
  filesS3AccessKeyId: setting({ env: 'PARLEY_FILES_S3_ACCESS_KEY_ID', default: '', doc: 'Access key of the bucket.', parse: optStr }),
  filesS3SecretAccessKey: setting({ env: 'PARLEY_FILES_S3_SECRET_ACCESS_KEY', default: '', doc: 'Secret key of the bucket.', parse: optStr, secret: true }),
  filesS3Prefix: setting({ env: 'PARLEY_FILES_S3_PREFIX', default: 'parley/', doc: 'Key prefix of the objects Parley writes in the bucket.', parse: str }),
  imageMaxBytes: setting({
    env: 'PARLEY_IMAGE_MAX_BYTES',
    default: String(20 * 1024 * 1024),
    doc: 'Largest decoded image (bytes of the file inside the data URL) `images/convertImage` accepts; larger: `TOO_LARGE`.',
    parse: int(1),
  }),
  imageMaxPixels: setting({
    env: 'PARLEY_IMAGE_MAX_PIXELS',
    // 4096 × 4096: a 12 MP phone photo fits, and one conversion stays under ~9 MB per million
    // pixels (~150 MB), so two at once fit a 1 GB board beside the server (docs/extras.md).
    default: String(16_777_216),
    doc: 'Largest width × height `images/convertImage` decodes, read from the image header before decoding; larger: `TOO_LARGE`. Pixels of 16-bit channels count twice. A conversion takes up to ~9 MB per million pixels at its peak: 50 MP photos need `50000000` and ~450 MB per conversion.',
    parse: int(1),
  }),
  imageConcurrency: setting({
    env: 'PARLEY_IMAGE_CONCURRENCY',
    default: '1',
    doc: 'Work that holds much memory, run at once: image decodes (`images/convertImage`, image uploads and generated images) and document reads; more wait their turn, in order. Each decode holds up to ~9 MB per million pixels of `PARLEY_IMAGE_MAX_PIXELS`, a document read up to its memory limit (~140 MB), so this bounds the memory a burst of uploads can take: 1 keeps the server under 300 MB on a 1 GB board; 2–4 on machines with 2 GB or more.',
    parse: int(1, 64),
  }),
  imageJpegQuality: setting({
    env: 'PARLEY_IMAGE_JPEG_QUALITY',
    default: '85',
    doc: 'JPEG quality (1–100) of `images/convertImage` output.',
    parse: int(1, 100),
  }),
  pushEnabled: setting({
    env: 'PARLEY_PUSH_ENABLED',
    default: 'true',
    doc: "Send push notifications through Expo's push service to the devices users registered. False: no push is sent.",
    parse: bool,
  }),
  expoBaseUrl: setting({
    env: 'PARLEY_EXPO_BASE_URL',
    default: '',
    doc: "Base URL of Expo's push service (for a proxy or a test double). Empty: the SDK's default. Passed to the SDK as `EXPO_BASE_URL` at start-up.",
    parse: (raw, name) => optStr(raw.trim().replace(/\/+$/, ''), name),
  }),
  expoAccessToken: setting({
    env: 'PARLEY_EXPO_ACCESS_TOKEN',
    default: '',
    doc: 'Expo access token, needed only when "enhanced push security" is on for the Expo project.',
    parse: optStr,
    secret: true,
  }),
  pushReceiptDelayMs: setting({
    env: 'PARLEY_PUSH_RECEIPT_DELAY_MS',
    default: '2000',
    doc: 'How long to wait after sending a push before asking Expo for its receipts, in milliseconds.',
    parse: int(0, 600_000),
  }),
  pushRetryMinMs: setting({
    env: 'PARLEY_PUSH_RETRY_MIN_MS',
    default: '1000',
    doc: 'First back-off of the Expo SDK when the push service answers 429 (it retries twice, doubling).',
    parse: int(0, 60_000),
  }),
  // fetchAllowPrivate: one row, under "reliability" above (it governs every server-side fetch).
  // --- group chats ---
  sseHeartbeatSeconds: setting({
    env: 'PARLEY_SSE_HEARTBEAT_S',
    default: '5',
    doc: 'Seconds between heartbeat ticks: at each, every event stream (group events, chat, research) that sent nothing since the previous tick sends a comment line (keeps proxies and idle timers from closing it). At most 25: a quiet stream hears something at least every two ticks, and the server closes a connection silent for 60 s.',
    // Two ticks must fit in the server's 60 s idle timeout (src/server.ts), with room to spare.
    parse: int(1, 25),
  }),
  sseRetryMs: setting({
    env: 'PARLEY_SSE_RETRY_MS',
    default: '3000',
    doc: 'The `retry` value (milliseconds) sent on event frames: how long a client waits before reconnecting.',
    parse: int(0, 3_600_000),
  }),
  groupEventRetentionDays: setting({
    env: 'PARLEY_GROUP_EVENT_RETENTION_DAYS',
    default: '7',
    doc: 'Days a group chat event is kept for replay to clients that reconnect with `Last-Event-ID` (messages themselves are kept).',
    parse: int(1, 3650),
  }),
  groupBatchMs: setting({
    env: 'PARLEY_GROUP_BATCH_MS',
    default: '10',
    doc: "A busy group's events go to its streams at most this often: an event waits until this long after the previous batch went out (an event after a quiet spell goes at once). Fewer, larger socket writes let a group with many members take many more messages; 0 sends every turn of the event loop.",
    parse: int(0, 1000),
  }),
  sseBufferEvents: setting({
    env: 'PARLEY_SSE_BUFFER_EVENTS',
    default: '256',
    doc: 'Events buffered for a subscriber that reads slower than events arrive; past this it is disconnected (it resumes with `Last-Event-ID`).',
    parse: int(1, 1_000_000),
  }),
  aiHandle: setting({
    env: 'PARLEY_AI_HANDLE',
    default: 'ai',
    doc: 'The handle that addresses the assistant in a group chat (`@ai` by default).',
    parse: (raw, name) => {
      const v = raw.trim().replace(/^@/, '');
      if (!/^[A-Za-z0-9_-]{1,32}$/.test(v)) throw new ConfigError(`${name} must be 1-32 letters, digits, _ or -, got "${raw}"`);
      return v;
    },
  }),
  groupAiHistory: setting({
    env: 'PARLEY_GROUP_AI_HISTORY',
    default: '100',
    doc: 'At most how many recent group messages the assistant reads when it answers; the context budget (`PARLEY_AI_CONTEXT_TOKENS`) then keeps as many of the newest as fit the model.',
    parse: int(1, 1000),
  }),
  groupInviteTtlHours: setting({
    env: 'PARLEY_GROUP_INVITE_TTL_HOURS',
    default: '168',
    doc: 'Hours a group invite code stays valid.',
    parse: int(1, 24 * 365),
  }),
  // --- support (docs/support.md) ---
  supportMaxOpenThreads: setting({
    env: 'PARLEY_SUPPORT_MAX_OPEN_THREADS',
    default: '3',
    doc: 'Open support conversations one user may have at once; one more (`support/createThread`, or writing in a closed one, which opens it again): 409. Admin replies are not held to it.',
    parse: int(1, 1000),
  }),
  supportMessageMaxChars: setting({
    env: 'PARLEY_SUPPORT_MESSAGE_MAX_CHARS',
    default: '4000',
    doc: 'Longest support message (user or admin), in characters after trimming; longer: 400 (`parley support reply`: exit 1). At most 20000.',
    parse: int(1, 20_000),
  }),
  // --- finding AI servers on this machine (docs/ai-providers.md, "Finding servers on this machine") ---
  discoverPorts: setting({
    env: 'PARLEY_DISCOVER_PORTS',
    default: '',
    doc: 'More TCP ports that "look for servers on this machine" (`admin/discoverServers`, the setup page, `parley discover`) probes, comma-separated (e.g. `8081,9000`), beside the usual ones: Ollama 11434, llama.cpp and LocalAI 8080, LM Studio 1234, vLLM and Speaches 8000, Kokoro 8880. Only this machine is probed (127.0.0.1 and ::1), whatever the ports.',
    parse: (raw, name) => list(raw, name).map((p) => int(1, 65535)(p, name)),
  }),
  // --- MCP servers' tools (docs/mcp.md) ---
  mcpConnectTimeoutS: setting({
    env: 'PARLEY_MCP_CONNECT_TIMEOUT_S',
    default: '10',
    doc: 'Seconds an MCP server has to answer the handshake (and its tool list) before it is left out of a turn and counted as a failure.',
    parse: int(1, 300),
  }),
  mcpCallTimeoutS: setting({
    env: 'PARLEY_MCP_CALL_TIMEOUT_S',
    default: '60',
    doc: "Seconds an MCP tool call may go without an answer or a progress notification (a server's own `timeoutS` replaces it); the model is then told the call timed out.",
    parse: int(1, 3600),
  }),
  mcpCallMaxS: setting({
    env: 'PARLEY_MCP_CALL_MAX_S',
    default: '600',
    doc: 'Seconds an MCP tool call may last in all, progress notifications or not.',
    parse: int(1, 86_400),
  }),
  mcpResultMaxBytes: setting({
    env: 'PARLEY_MCP_RESULT_MAX_BYTES',
    default: '33554432',
    doc: "Largest answer read from an MCP server (one HTTP response or one stdio message), in bytes: past it the call fails with a sentence saying so, and nothing more is held in memory.",
    parse: int(65_536, 1_073_741_824),
  }),
  mcpResultMaxChars: setting({
    env: 'PARLEY_MCP_RESULT_MAX_CHARS',
    default: '100000',
    doc: "Characters of a tool's answer handed to the model and shown in `mcp_call.completed`; a longer answer is cut there with a line saying how long it was.",
    parse: int(1000, 10_000_000),
  }),
  mcpIdleS: setting({
    env: 'PARLEY_MCP_IDLE_S',
    default: '300',
    doc: 'Seconds an MCP connection (one per server and user; a process for a stdio server) stays open unused before it is closed.',
    parse: int(5, 86_400),
  }),
  mcpMaxConnections: setting({
    env: 'PARLEY_MCP_MAX_CONNECTIONS',
    default: '32',
    doc: 'MCP connections kept open at once across every server and user; past it the least recently used is closed.',
    parse: int(1, 10_000),
  }),
  mcpBreakerFailures: setting({
    env: 'PARLEY_MCP_BREAKER_FAILURES',
    default: '5',
    doc: 'Failures in a row (connections refused, timeouts) after which an MCP server is left alone for `PARLEY_MCP_BREAKER_OPEN_S`: its tools fail at once with a sentence saying so.',
    parse: int(1, 1000),
  }),
  mcpBreakerOpenS: setting({
    env: 'PARLEY_MCP_BREAKER_OPEN_S',
    default: '30',
    doc: 'Seconds a failing MCP server is left alone before one call tries it again.',
    parse: int(1, 3600),
  }),
  mcpRefreshEarlyS: setting({
    env: 'PARLEY_MCP_REFRESH_EARLY_S',
    default: '300',
    doc: "Seconds before an MCP server's OAuth access token expires that Parley refreshes it (plus up to a tenth of that at random, so users' tokens do not all refresh at once).",
    parse: int(0, 86_400),
  }),
  mcpMaxServersPerUser: setting({
    env: 'PARLEY_MCP_SERVERS_MAX_PER_USER',
    default: '20',
    doc: 'MCP servers one user may add (when the admin lets users add their own); one more: 409.',
    parse: int(1, 1000),
  }),
} satisfies Record<string, Setting<unknown>>;

type Settings = typeof settings;
export type Config = { [K in keyof Settings]: Settings[K] extends Setting<infer T> ? T : never };

/**
 * Parse the settings from an environment and a map of CLI flag values (flag → raw string).
 * Flags win over the environment, the environment over defaults.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  flags: Record<string, string | undefined> = {},
): Config {
  const out: Record<string, unknown> = {};
  // An empty value is no value: a `KEY=` line left in an environment file must not turn the
  // listening host into every interface, the port into a random one or a limit into 0.
  const given = (v: string | undefined) => (v === '' ? undefined : v);
  for (const [key, s] of Object.entries(settings) as [string, Setting<unknown>][]) {
    const flag = s.flag ? given(flags[s.flag]) : undefined;
    const fromEnv = given(env[s.env]);
    out[key] = s.parse(flag ?? fromEnv ?? s.default, flag !== undefined ? s.flag! : s.env);
  }
  return out as Config;
}

/** A config for tests and tools: defaults, overridden by the given values. */
/** The sealing key of test apps (32 bytes of 7, in base64). */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7).toString('base64');

export function testConfig(overrides: Partial<Config> = {}): Config {
  // Push is off unless a test asks for it: the Expo SDK fixes its base URL once per process.
  // A fixed sealing key: a test's credentials never make a key file in the working directory.
  return { ...loadConfig({}), pushEnabled: false, secretKey: TEST_SECRET_KEY, ...overrides };
}

export const settingList = settings as Record<string, Setting<unknown>>;

/** Parsers for rows added by other domains. */
export const parsers = { str, optStr, int, bool, oneOf, list };

// --- oauth ---
// Function declarations (hoisted), so the table above can use them while they live down here.

/** An absolute http(s) URL without a trailing slash, or undefined when empty. */
function optHttpUrl(raw: string, name: string): string | undefined {
  if (raw.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`${name} must be an absolute URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http or https URL, got "${raw}"`);
  return url.href.replace(/\/+$/, '');
}

/** Web schemes are refused: a token sent to one would leave the device in a URL. */
function redirectSchemes(raw: string, name: string): string[] {
  const schemes = list(raw, name).map((s) => s.toLowerCase().replace(/:(\/\/)?$/, ''));
  for (const s of schemes)
    if (!/^[a-z][a-z0-9+.-]*$/.test(s) || ['http', 'https', 'javascript', 'data', 'file', 'blob', 'about', 'vbscript', 'ws', 'wss'].includes(s))
      throw new ConfigError(`${name} holds custom schemes such as myapp; "${s}" is not allowed`);
  return schemes;
}

function oauthRow(provider: string, label: string, what: 'client id' | 'client secret' | 'base URL', example = ''): Setting<string | undefined> {
  return {
    env: `PARLEY_OAUTH_${provider}_${what === 'client id' ? 'CLIENT_ID' : what === 'client secret' ? 'CLIENT_SECRET' : 'BASE_URL'}`,
    default: '',
    doc: `${label} sign-in: ${what}${example ? ` (${example})` : ''}.${what === 'client id' ? ` The provider is offered once its ${['GITHUB', 'GOOGLE'].includes(provider) ? 'id and secret' : 'id, secret and base URL'} are set.` : ''}`,
    parse: what === 'base URL' ? optHttpUrl : optStr,
    ...(what === 'client secret' ? { secret: true } : {}),
  };
}

/**
 * expo-server-sdk takes its base URL only from `EXPO_BASE_URL`, read once when the SDK module is
 * first evaluated. Call this before importing the SDK (src/notifications/expo-client.ts does) so
 * `PARLEY_EXPO_BASE_URL` reaches it; kept here because this file alone touches the environment.
 */
export function exportExpoBaseUrl(config: Pick<Config, 'expoBaseUrl'>): void {
  if (config.expoBaseUrl) process.env.EXPO_BASE_URL = config.expoBaseUrl;
}
