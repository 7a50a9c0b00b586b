import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, preHandlerAsyncHookHandler } from 'fastify';
import { GatewayError } from '../errors.js';
import { inspectJsonRpcBody, type JsonRpcMessageFacts } from '../policy/jsonrpc.js';
import { mirroredHeadersProblem } from '../policy/mcp-headers.js';
import { hasUnparsableResourceUri, requiredScopes } from '../policy/required-scopes.js';
import { corsDecision, preflightHeaders } from '../proxy/cors.js';
import { rebindingRefused } from '../proxy/dns-rebinding.js';
import type { RouteRuntime, Runtime } from '../runtime.js';
import { bindingDecision } from '../session/bindings.js';
import { readSessionId } from '../session/session-id.js';
import { extractBearerToken, hasAccessTokenInQuery } from './authorization-header.js';
import { effectiveScopes, missingScopes } from './scopes.js';
import type { AuthContext } from './types.js';

/** Per-request state shared by the auth hooks and the proxy handler. */
export interface McpRequestState {
  readonly entry: RouteRuntime;
  readonly maxBodyBytes: number;
  auth: AuthContext | undefined;
  jsonRpcId: string | number | null;
  upstreamCredential: Readonly<Record<string, string>>;
  /** The request's valid Mcp-Session-Id, once authenticated. */
  sessionId: string | undefined;
  /** The POST body's JSON-RPC message, once authorized. */
  message: JsonRpcMessageFacts | undefined;
  /** The caller's scopes with policy.implies applied, once authorized: what every scope check uses. */
  scopes: ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcp: McpRequestState | null;
  }
}

const MCP_METHODS = new Set(['GET', 'POST', 'DELETE']);
const ALLOWED_METHODS = 'GET, POST, DELETE, OPTIONS';

/**
 * A CORS preflight (an OPTIONS with Origin and Access-Control-Request-Method): browsers send it without
 * credentials, so it is answered before authentication. Any other request on an MCP path, OPTIONS and HEAD
 * included, authenticates first (checklist K7).
 */
function isPreflight(request: FastifyRequest, origin: string | undefined): boolean {
  return request.method === 'OPTIONS' && origin !== undefined && request.headers['access-control-request-method'] !== undefined;
}

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

/**
 * The caller's raw token, kept for the one use that needs it (RFC 8693 subject_token) outside the request state,
 * so no serialisation of the request or its state can ever print it.
 */
const subjectTokens = new WeakMap<FastifyRequest, string>();

export function mcpState(request: FastifyRequest): McpRequestState {
  if (!request.mcp) throw new Error('MCP request state missing: authenticate hook did not run');
  return request.mcp;
}

/**
 * onRequest: route lookup, Origin check, preflight, token extraction and verification — all before the body is
 * read, so an unauthenticated client never makes the gateway buffer a body.
 */
export function authenticateHook(current: (request: FastifyRequest) => Runtime): onRequestAsyncHookHandler {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply) {
    const runtime = current(request);
    const entry = runtime.routes.get(requestPath(request.url));
    if (!entry) throw new GatewayError('not_found');
    request.mcp = {
      entry,
      maxBodyBytes: runtime.config.limits.maxBodyBytes,
      auth: undefined,
      jsonRpcId: null,
      upstreamCredential: {},
      sessionId: undefined,
      message: undefined,
      scopes: new Set(),
    };

    const origin = singleHeader(request, 'origin');
    if (rebindingRefused(runtime.config.hosts, request.headers.host, origin, entry.route.cors.allowedOrigins)) {
      throw new GatewayError('host_forbidden');
    }
    const cors = corsDecision(entry.route.cors, origin);
    if (!cors.allowed) throw new GatewayError('origin_forbidden');
    void reply.headers(cors.headers);
    if (isPreflight(request, origin)) {
      return reply.code(204).headers(preflightHeaders(entry.route.cors)).send();
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
      case 'token': {
        const auth = await entry.verifier.verify(extraction.token, { clientAddress: request.ip });
        // Checklist K7: which methods exist is only told to an authenticated caller.
        if (!MCP_METHODS.has(request.method)) {
          return reply.code(request.method === 'OPTIONS' ? 204 : 405).header('allow', ALLOWED_METHODS).send();
        }
        request.mcp.auth = auth;
        subjectTokens.set(request, extraction.token);
        // The route's own scopes need no body: a caller without them is refused before it is read (K10).
        const { policy } = entry.route;
        request.mcp.scopes = effectiveScopes(auth.scopes, policy.implies);
        if (missingScopes(policy.scopes, request.mcp.scopes).length > 0) {
          throw new GatewayError('insufficient_scope', { requiredScopes: requiredScopes(policy, undefined) });
        }
        await entry.rateLimiter?.take(auth);
        request.mcp.sessionId = await checkSession(request, entry, auth);
        return undefined;
      }
    }
  };
}

/**
 * Checklist G1–G5, G8: a session id must be well-formed, and (with `sessions.bind`) bound to this principal. Runs
 * after authentication (a session never authenticates) and before the body is read or anything reaches upstream.
 */
async function checkSession(request: FastifyRequest, entry: RouteRuntime, auth: AuthContext): Promise<string | undefined> {
  const header = readSessionId(request.headers['mcp-session-id']);
  if (header.kind === 'invalid') throw new GatewayError('invalid_session_id', { reason: 'malformed_session_id' });
  if (header.kind === 'absent') return undefined;
  if (entry.route.sessions.bind) {
    const refused = bindingDecision(await entry.sessions.check(header.id, auth));
    if (refused) throw refused;
  }
  return header.id;
}

/**
 * preHandler: the JSON-RPC message decides which scopes are needed (authenticate first, authorize second) — after
 * its mirrored Mcp-Method / Mcp-Name headers were checked against it — then the upstream credential and identity
 * assertion for this caller are resolved.
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
      state.message = message;
      const mismatch = mirroredHeadersProblem(request.headers, message);
      if (mismatch) throw new GatewayError('header_mismatch', { reason: mismatch });
    }

    const { policy } = state.entry.route;
    if (message && hasUnparsableResourceUri(policy, message)) {
      throw new GatewayError('invalid_params', { reason: 'unparsable_resource_uri' });
    }
    const required = requiredScopes(policy, message);
    if (missingScopes(required, state.scopes).length > 0) {
      throw new GatewayError('insufficient_scope', { requiredScopes: required });
    }
    const subjectToken = subjectTokens.get(request);
    if (subjectToken === undefined) throw new Error('authorize hook ran without the caller token');
    const credential = await state.entry.credentials.headersFor(auth, subjectToken);
    const { identity } = state.entry;
    state.upstreamCredential = identity
      ? { ...credential, [identity.header]: await identity.assert(auth, state.scopes) }
      : credential;
  };
}
