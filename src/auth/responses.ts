import type { GatewayError } from '../errors.js';
import { buildChallenge, CHALLENGE_DESCRIPTIONS } from './challenge.js';

export interface ErrorResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** What an error response needs to know about the route that produced it; absent when no route matched. */
export interface ChallengeContext {
  readonly metadataUrl: string;
  /** Scopes to advertise in a 401 challenge (the route's scopes, or scopes_supported). */
  readonly challengeScopes: readonly string[];
}

/** Seconds a client should wait before retrying when the gateway cannot decide. */
const RETRY_AFTER_SECONDS = 5;

/** Fixed, input-free descriptions: a response never echoes anything the client sent. */
const DESCRIPTIONS = {
  ...CHALLENGE_DESCRIPTIONS,
  missing_token: 'Authorization required',
  auth_unavailable: 'Authorization temporarily unavailable; retry later',
  origin_forbidden: 'Origin not allowed',
  host_forbidden: 'Host or Origin not allowed for this gateway',
  invalid_jsonrpc: 'Request body must be a single JSON-RPC message',
  invalid_params: 'Resource URI cannot be parsed',
  body_required: 'The gateway needs the request body to authorize this request',
  payload_too_large: 'Request body too large',
  not_found: 'Not found',
  upstream_unreachable: 'Upstream MCP server unavailable',
  upstream_rejected: "Upstream MCP server rejected the gateway's credentials",
  upstream_timeout: 'Upstream MCP server timed out',
  upstream_credentials_failed: 'Gateway could not obtain credentials for the upstream MCP server',
  invalid_session_id: 'Invalid Mcp-Session-Id header',
  session_not_found: 'Session not found',
  header_mismatch: 'Mcp-Method, Mcp-Name, Mcp-Param-* or MCP-Protocol-Version header missing, invalid or not matching the request body',
  rate_limited: 'Rate limit exceeded; retry later',
  too_many_streams: 'Too many open streams; close one or retry later',
  too_many_requests: 'Too many requests in flight; retry when one has finished',
  draining: 'Gateway is shutting down; retry on another instance',
  elicitation_required: 'This request requires connecting your account at the upstream service',
  proxy_unauthenticated: 'The decision listener answers only its configured proxy',
  proxy_description_conflict: 'The request carries a request description of another proxy',
  proxy_description_incomplete: 'The proxy did not describe the request completely',
} as const satisfies Record<GatewayError['code'], string>;

/**
 * JSON-RPC error codes the gateway itself answers with. The range -32000…-32099 belongs to the MCP specification
 * (2026-07-28: -32020…-32099 reserved, -32000…-32019 legacy): of it only the codes MCP defines are used, with their
 * meaning. Everything else is a standard JSON-RPC code; the HTTP status tells the failure apart.
 */
const JSONRPC_CODES = {
  invalidRequest: -32600,
  invalidParams: -32602,
  /** The gateway or the upstream behind it failed (502/503/504) or refused for capacity (429). */
  internalError: -32603,
  /** MCP 2026-07-28 HeaderMismatch. */
  headerMismatch: -32020,
  /** MCP 2025-11-25 URLElicitationRequiredError (2026-07-28 forbids it). */
  urlElicitationRequired: -32042,
  /** MCP 2026-07-28 MissingRequiredClientCapability. */
  missingRequiredClientCapability: -32021,
} as const;

function oauthBody(error: string, description: string): string {
  return JSON.stringify({ error, error_description: description });
}

function jsonRpcError(id: string | number | null, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });
}

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' } as const;

type JsonRpcFailure =
  | 'invalid_jsonrpc'
  | 'body_required'
  | 'invalid_params'
  | 'payload_too_large'
  | 'upstream_unreachable'
  | 'upstream_rejected'
  | 'upstream_timeout'
  | 'upstream_credentials_failed'
  | 'invalid_session_id'
  | 'header_mismatch';

/** Failures answered with a plain JSON-RPC error body: HTTP status and JSON-RPC code. */
const JSONRPC_FAILURES: Readonly<Record<JsonRpcFailure, readonly [status: number, code: number]>> = {
  invalid_jsonrpc: [400, JSONRPC_CODES.invalidRequest],
  body_required: [400, JSONRPC_CODES.invalidRequest],
  invalid_params: [400, JSONRPC_CODES.invalidParams],
  payload_too_large: [413, JSONRPC_CODES.invalidRequest],
  upstream_unreachable: [502, JSONRPC_CODES.internalError],
  upstream_rejected: [502, JSONRPC_CODES.internalError],
  upstream_timeout: [504, JSONRPC_CODES.internalError],
  upstream_credentials_failed: [502, JSONRPC_CODES.internalError],
  invalid_session_id: [400, JSONRPC_CODES.invalidRequest],
  header_mismatch: [400, JSONRPC_CODES.headerMismatch],
};

/**
 * Maps every gateway error to its status, headers and body (ARCHITECTURE.md "Responses"). Exhaustive: adding a
 * code to GatewayErrorCode without a case here is a compile error.
 */
export function errorResponse(
  error: GatewayError,
  challenge: ChallengeContext | undefined,
  jsonRpcId: string | number | null = null,
): ErrorResponse {
  const description = DESCRIPTIONS[error.code];
  switch (error.code) {
    case 'missing_token':
    case 'invalid_request':
    case 'invalid_token':
    case 'insufficient_scope': {
      const status = { missing_token: 401, invalid_request: 400, invalid_token: 401, insufficient_scope: 403 }[error.code];
      const headers: Record<string, string> = { ...JSON_TYPE, 'cache-control': 'no-store' };
      if (challenge) {
        headers['www-authenticate'] = buildChallenge({
          ...(error.code === 'missing_token' ? {} : { error: error.code }),
          resourceMetadataUrl: challenge.metadataUrl,
          scopes: error.code === 'insufficient_scope' ? (error.requiredScopes ?? []) : challenge.challengeScopes,
        });
      }
      return { statusCode: status, headers, body: oauthBody(error.code, description) };
    }
    case 'auth_unavailable':
      return {
        statusCode: 503,
        headers: { ...JSON_TYPE, 'retry-after': String(RETRY_AFTER_SECONDS), 'cache-control': 'no-store' },
        body: oauthBody('temporarily_unavailable', description),
      };
    case 'draining':
      return {
        statusCode: 503,
        headers: { ...JSON_TYPE, 'retry-after': '1', connection: 'close' },
        body: jsonRpcError(jsonRpcId, JSONRPC_CODES.internalError, description),
      };
    case 'origin_forbidden':
    case 'host_forbidden':
    case 'proxy_unauthenticated':
      return { statusCode: 403, headers: JSON_TYPE, body: oauthBody(error.code, description) };
    case 'proxy_description_conflict':
      return { statusCode: 400, headers: JSON_TYPE, body: oauthBody('invalid_request', description) };
    case 'proxy_description_incomplete':
      return { statusCode: 500, headers: JSON_TYPE, body: oauthBody('decision_request_incomplete', description) };
    case 'not_found':
      return { statusCode: 404, headers: JSON_TYPE, body: JSON.stringify({ error: 'not_found' }) };
    case 'invalid_jsonrpc':
    case 'body_required':
    case 'invalid_params':
    case 'payload_too_large':
    case 'upstream_unreachable':
    case 'upstream_rejected':
    case 'upstream_timeout':
    case 'upstream_credentials_failed':
    case 'invalid_session_id':
    case 'header_mismatch': {
      const [statusCode, code] = JSONRPC_FAILURES[error.code];
      return { statusCode, headers: JSON_TYPE, body: jsonRpcError(jsonRpcId, code, description) };
    }
    case 'session_not_found':
      // No challenge and nothing about the session: a foreign session must read as an unknown one.
      return { statusCode: 404, headers: JSON_TYPE, body: jsonRpcError(null, JSONRPC_CODES.invalidRequest, description) };
    case 'elicitation_required':
      return elicitationResponse(error, description, jsonRpcId);
    case 'rate_limited':
    case 'too_many_streams':
    case 'too_many_requests': {
      const retryAfterMs = Math.max(0, Math.ceil(error.retryAfterMs ?? 1_000));
      return {
        statusCode: 429,
        headers: { ...JSON_TYPE, 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1_000))) },
        body: jsonRpcError(jsonRpcId, JSONRPC_CODES.internalError, description, { retryAfterMs }),
      };
    }
  }
}

const NO_STORE_JSON = { ...JSON_TYPE, 'cache-control': 'no-store' } as const;

/**
 * The URL elicitation of a consent link (user_oauth) in the form the request's revision prescribes
 * (src/consent/elicitation.ts): 2025-11-25 `URLElicitationRequiredError`, 2026-07-28 `InputRequiredResult` or
 * `MissingRequiredClientCapability`, or a 403 where neither revision lets the answer carry a link.
 */
function elicitationResponse(error: GatewayError, description: string, jsonRpcId: string | number | null): ErrorResponse {
  const { answer, link, message } = error.elicitation ?? { answer: 'not_connected', message: description };
  // Answers that hand out a link are built only with one; without, the request is refused like any other.
  const linkless = { statusCode: 403, headers: NO_STORE_JSON, body: jsonRpcError(jsonRpcId, JSONRPC_CODES.invalidRequest, message) };
  switch (answer) {
    case 'url_elicitation_error':
    case 'url_elicitation_refusal': {
      if (!link) return linkless;
      const data = { elicitations: [{ mode: 'url', elicitationId: link.elicitationId, url: link.url, message }] };
      const [status, id] = answer === 'url_elicitation_error' ? [200, jsonRpcId] : [403, null];
      return { statusCode: status, headers: NO_STORE_JSON, body: jsonRpcError(id, JSONRPC_CODES.urlElicitationRequired, description, data) };
    }
    case 'input_required': {
      if (!link) return linkless;
      const inputRequests = { [link.elicitationId]: { method: 'elicitation/create', params: { mode: 'url', message, url: link.url } } };
      const body = JSON.stringify({ jsonrpc: '2.0', id: jsonRpcId, result: { resultType: 'input_required', inputRequests } });
      return { statusCode: 200, headers: NO_STORE_JSON, body };
    }
    case 'missing_capability': {
      const data = { requiredCapabilities: { elicitation: { url: {} } } };
      const body = jsonRpcError(jsonRpcId, JSONRPC_CODES.missingRequiredClientCapability, 'Client must support URL elicitation', data);
      return { statusCode: 400, headers: NO_STORE_JSON, body };
    }
    case 'not_connected':
      return linkless;
  }
}
