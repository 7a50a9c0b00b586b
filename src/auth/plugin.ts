import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { GatewayError } from '../errors.js';
import { inspectJsonRpcBody } from '../policy/jsonrpc.js';
import { requiredScopes } from '../policy/required-scopes.js';
import { corsDecision, preflightHeaders } from '../proxy/cors.js';
import type { RouteRuntime, Runtime } from '../runtime.js';
import { extractBearerToken, hasAccessTokenInQuery } from './authorization-header.js';
import { missingScopes } from './scopes.js';
import type { AuthContext } from './types.js';

/** Per-request state shared by the auth hooks and the proxy handler. */
export interface McpRequestState {
  readonly entry: RouteRuntime;
  readonly maxBodyBytes: number;
  auth: AuthContext | undefined;
  jsonRpcId: string | number | null;
  upstreamCredential: Readonly<Record<string, string>>;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcp: McpRequestState | null;
  }
}

const MCP_METHODS = new Set(['GET', 'POST', 'DELETE']);

export function requestPath(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}

function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** RFC 6750 §2.2/§2.3 carriers the gateway refuses: a token must only ever travel in the Authorization header. */
function carriesTokenOutsideHeader(request: FastifyRequest): boolean {
  const contentType = singleHeader(request, 'content-type')?.toLowerCase() ?? '';
  const cookie = singleHeader(request, 'cookie') ?? '';
  return (
    hasAccessTokenInQuery(request.url) ||
    contentType.startsWith('application/x-www-form-urlencoded') ||
    /(?:^|;)\s*access_token=/i.test(cookie)
  );
}

export function mcpState(request: FastifyRequest): McpRequestState {
  if (!request.mcp) throw new Error('MCP request state missing: authenticate hook did not run');
  return request.mcp;
}

/**
 * onRequest: route lookup, Origin check, preflight, token extraction and verification — all before the body is
 * read, so an unauthenticated client never makes the gateway buffer a body.
 */
export function authenticateHook(current: () => Runtime): onRequestAsyncHookHandler {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply) {
    const runtime = current();
    const entry = runtime.routes.get(requestPath(request.url));
    if (!entry) throw new GatewayError('not_found');
    request.mcp = { entry, maxBodyBytes: runtime.config.limits.maxBodyBytes, auth: undefined, jsonRpcId: null, upstreamCredential: {} };

    const cors = corsDecision(entry.route.cors, singleHeader(request, 'origin'));
    if (!cors.allowed) throw new GatewayError('origin_forbidden');
    void reply.headers(cors.headers);
    if (request.method === 'OPTIONS') {
      return reply.code(204).headers(preflightHeaders(entry.route.cors)).send();
    }
    if (!MCP_METHODS.has(request.method)) {
      return reply.code(405).header('allow', 'GET, POST, DELETE, OPTIONS').send();
    }

    if (carriesTokenOutsideHeader(request)) throw new GatewayError('invalid_request', { reason: 'token_outside_header' });
    const extraction = extractBearerToken(request.raw.rawHeaders, runtime.config.limits.maxTokenBytes);
    switch (extraction.kind) {
      case 'missing':
        throw new GatewayError('missing_token');
      case 'invalid_request':
        throw new GatewayError('invalid_request', { reason: 'malformed_authorization_header' });
      case 'too_long':
        throw new GatewayError('invalid_token', { reason: 'token_too_long' });
      case 'token':
        request.mcp.auth = await entry.verifier.verify(extraction.token);
        return undefined;
    }
  };
}

/**
 * preHandler: the JSON-RPC message decides which scopes are needed (authenticate first, authorize second), then the
 * upstream credential for this caller is resolved.
 */
export function authorizeHook(): preHandlerAsyncHookHandler {
  return async function authorize(request: FastifyRequest) {
    const state = mcpState(request);
    const auth = state.auth;
    if (!auth) throw new Error('authorize hook ran without an authenticated caller');

    let message;
    if (request.method === 'POST') {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const inspection = inspectJsonRpcBody(body, singleHeader(request, 'content-type'));
      if (inspection.kind === 'invalid') {
        state.jsonRpcId = inspection.id;
        throw new GatewayError('invalid_jsonrpc', { reason: inspection.reason });
      }
      message = inspection.message;
      state.jsonRpcId = message.id ?? null;
    }

    const required = requiredScopes(state.entry.route.policy, message);
    if (missingScopes(required, auth.scopes).length > 0) {
      throw new GatewayError('insufficient_scope', { requiredScopes: required });
    }
    state.upstreamCredential = await state.entry.credentials.headersFor(auth);
  };
}
