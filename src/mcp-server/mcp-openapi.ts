import { OAUTH_PATHS } from './oauth/oauth-metadata';
import { MCP_PATH } from './mcp.routes';

/**
 * OpenAPI entries for `/mcp` and the OAuth endpoints of its authorization server, which are not
 * operation rows (they speak MCP's and OAuth's formats, not Parley's envelope): what a client
 * generated from /api/openapi.json needs to find them. The protocols themselves are the specs'
 * (docs/mcp-server.md); the answers' fields are typed as sent, numbers as numbers.
 */
const TAG = ['mcpAccess'];
const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const oauthError = (description: string) =>
  json({ type: 'object', required: ['error'], properties: { error: { type: 'string' }, error_description: { type: 'string' } } }, description);
const strings = { type: 'array', items: { type: 'string' } };
const form = (properties: Record<string, object>, required: string[]) => ({
  required: true,
  content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required, properties } } },
});

const resourceMetadata = {
  get: {
    operationId: 'mcpAccess.protectedResourceMetadata',
    tags: TAG,
    summary: "`/mcp`'s protected resource metadata (RFC 9728)",
    security: [],
    responses: {
      200: json(
        {
          type: 'object',
          required: ['resource', 'authorization_servers'],
          properties: {
            resource: { type: 'string' },
            authorization_servers: strings,
            scopes_supported: strings,
            bearer_methods_supported: strings,
            resource_name: { type: 'string' },
            resource_documentation: { type: 'string' },
          },
        },
        'The metadata',
      ),
    },
  },
};

export const mcpOpenApiPaths = {
  [MCP_PATH]: {
    post: {
      operationId: 'mcpAccess.mcp',
      tags: TAG,
      summary: 'Parley as an MCP server (streamable HTTP, stateless)',
      security: [{ bearer: [] }, { apiKey: [] }],
      description:
        'JSON-RPC messages of the Model Context Protocol (2026-07-28, and 2025-11-25 and older through `initialize`). Credential: a Parley API key or an OAuth access token as `Authorization: Bearer`, or `x-api-key`. Answers JSON, or an SSE stream when a tool sends progress first.',
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        200: { description: 'The JSON-RPC answer', content: { 'application/json': { schema: { type: 'object' } }, 'text/event-stream': {} } },
        202: { description: 'A notification or a response, accepted' },
        401: { description: 'No valid credential: `WWW-Authenticate: Bearer error="invalid_token", resource_metadata="…"`' },
        403: { description: 'A browser page of another origin (DNS rebinding protection)' },
        413: { description: 'The body is larger than 256 KiB' },
      },
    },
  },
  [OAUTH_PATHS.protectedResource]: resourceMetadata,
  [`${OAUTH_PATHS.protectedResource}/mcp`]: { get: { ...resourceMetadata.get, operationId: 'mcpAccess.protectedResourceMetadataOfMcp' } },
  [OAUTH_PATHS.authorizationServer]: {
    get: {
      operationId: 'mcpAccess.authorizationServerMetadata',
      tags: TAG,
      summary: "Parley's OAuth authorization server metadata (RFC 8414)",
      security: [],
      responses: {
        200: json(
          {
            type: 'object',
            required: ['issuer', 'authorization_endpoint', 'token_endpoint', 'response_types_supported'],
            properties: Object.fromEntries(
              [
                ['issuer', { type: 'string' }],
                ['authorization_endpoint', { type: 'string' }],
                ['token_endpoint', { type: 'string' }],
                ['registration_endpoint', { type: 'string' }],
                ['revocation_endpoint', { type: 'string' }],
                ['authorization_response_iss_parameter_supported', { type: 'boolean' }],
                ...['scopes_supported', 'response_types_supported', 'response_modes_supported', 'grant_types_supported', 'code_challenge_methods_supported', 'token_endpoint_auth_methods_supported', 'revocation_endpoint_auth_methods_supported'].map((k) => [k, strings]),
              ],
            ),
          },
          'The metadata',
        ),
      },
    },
  },
  [OAUTH_PATHS.register]: {
    post: {
      operationId: 'mcpAccess.registerClient',
      tags: TAG,
      summary: 'Dynamic client registration (RFC 7591), open to any MCP client',
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['redirect_uris'],
              properties: { redirect_uris: strings, client_name: { type: 'string' }, client_uri: { type: 'string' }, token_endpoint_auth_method: { type: 'string', enum: ['none', 'client_secret_post', 'client_secret_basic'] }, grant_types: strings, response_types: strings },
            },
          },
        },
      },
      responses: {
        201: json(
          {
            type: 'object',
            required: ['client_id', 'client_id_issued_at', 'redirect_uris', 'token_endpoint_auth_method'],
            properties: {
              client_id: { type: 'string' },
              client_id_issued_at: { type: 'integer' },
              client_name: { type: 'string' },
              client_uri: { type: 'string' },
              redirect_uris: strings,
              token_endpoint_auth_method: { type: 'string' },
              grant_types: strings,
              response_types: strings,
              scope: { type: 'string' },
              client_secret: { type: 'string', description: 'Only for a confidential client, shown once' },
              client_secret_expires_at: { type: 'integer', description: '0: it does not expire' },
            },
          },
          'The client, registered',
        ),
        400: oauthError('`invalid_redirect_uri` or `invalid_client_metadata`'),
      },
    },
  },
  [OAUTH_PATHS.token]: {
    post: {
      operationId: 'mcpAccess.token',
      tags: TAG,
      summary: 'Trade an authorization code (with its PKCE verifier) or a refresh token for tokens',
      security: [],
      requestBody: form(
        {
          grant_type: { type: 'string', enum: ['authorization_code', 'refresh_token'] },
          code: { type: 'string' },
          code_verifier: { type: 'string' },
          redirect_uri: { type: 'string' },
          refresh_token: { type: 'string' },
          client_id: { type: 'string' },
          client_secret: { type: 'string' },
          resource: { type: 'string' },
        },
        ['grant_type'],
      ),
      responses: {
        200: json(
          {
            type: 'object',
            required: ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope'],
            properties: { access_token: { type: 'string' }, token_type: { type: 'string', enum: ['Bearer'] }, expires_in: { type: 'integer' }, refresh_token: { type: 'string' }, scope: { type: 'string' } },
          },
          'New tokens; the refresh token used, if any, is dead',
        ),
        400: oauthError('`invalid_request`, `invalid_grant`, `invalid_target` or `unsupported_grant_type`'),
        401: oauthError('`invalid_client`'),
      },
    },
  },
  [OAUTH_PATHS.revoke]: {
    post: {
      operationId: 'mcpAccess.revokeToken',
      tags: TAG,
      summary: "End the grant of one of the client's tokens (RFC 7009)",
      security: [],
      requestBody: form({ token: { type: 'string' }, token_type_hint: { type: 'string' }, client_id: { type: 'string' }, client_secret: { type: 'string' } }, ['token']),
      responses: {
        200: json({ type: 'object' }, 'Done, whether or not the token was known'),
        401: oauthError('`invalid_client`'),
      },
    },
  },
};
