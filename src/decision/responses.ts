import { BEARER_ONLY, buildChallenge, CHALLENGE_DESCRIPTIONS, namedScopes, type ChallengeContext, type ChallengeError } from './challenge.js';
import type { GatewayError, Refusal, RefusalCode, UrlElicitation } from './refusal.js';

/**
 * The response table: every status, header and body the gateway answers for a decision, one row per refusal code
 * (and the early answers below). ARCHITECTURE.md "Responses" is the contract; the README lists the rows.
 */

export interface ErrorResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Where a refusal happened: the route's challenge (when a route matched) and the JSON-RPC id it answers. */
interface AnswerContext {
  readonly challenge: ChallengeContext | undefined;
  readonly jsonRpcId: string | number | null;
}

/** Seconds a client should wait before retrying when the gateway cannot decide. */
const RETRY_AFTER_SECONDS = 5;

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
} as const;

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' } as const;
const NO_STORE_JSON = { ...JSON_TYPE, 'cache-control': 'no-store' } as const;

function oauthBody(error: string, description: string): string {
  return JSON.stringify({ error, error_description: description });
}

function jsonRpcError(id: string | number | null, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });
}

/** A JSON-RPC error answering the request's id. */
function jsonRpc(statusCode: number, code: number, description: string) {
  return (_refusal: Refusal, at: AnswerContext): ErrorResponse => ({ statusCode, headers: JSON_TYPE, body: jsonRpcError(at.jsonRpcId, code, description) });
}

/** An OAuth-style `{error, error_description}` body. */
function oauth(statusCode: number, error: string, description: string) {
  const response: ErrorResponse = { statusCode, headers: JSON_TYPE, body: oauthBody(error, description) };
  return (): ErrorResponse => response;
}

/** `{error}` alone: answers that say nothing about the request (an unknown path, a framework failure). */
function bare(error: string, statusCode: number): ErrorResponse {
  return { statusCode, headers: JSON_TYPE, body: JSON.stringify({ error }) };
}

/**
 * RFC 6750 §3 / RFC 9449 §7.1: a 401/403/400 with the route's `WWW-Authenticate` challenges (none when no route
 * matched); `use_dpop_nonce` also names the nonce to use (RFC 9449 §9).
 */
function challenged(statusCode: number, code: ChallengeError | 'missing_token', description: string) {
  return (refusal: Refusal, at: AnswerContext): ErrorResponse => {
    const headers: Record<string, string> = { ...NO_STORE_JSON };
    if (at.challenge) {
      headers['www-authenticate'] = buildChallenge({
        ...(code === 'missing_token' ? {} : { error: code }),
        resourceMetadataUrl: at.challenge.metadataUrl,
        scopes:
          refusal.code === 'insufficient_scope'
            ? namedScopes(refusal.requiredScopes, at.challenge.alsoNamedScopes, at.challenge.advertisedScopes)
            : at.challenge.challengeScopes,
        schemes: at.challenge.schemes ?? BEARER_ONLY,
      });
    }
    if (refusal.code === 'use_dpop_nonce') headers['dpop-nonce'] = refusal.nonce;
    return { statusCode, headers, body: oauthBody(code, description) };
  };
}

/** 429 with `Retry-After` and `data.retryAfterMs`. */
function capacity(description: string) {
  return (refusal: Refusal, at: AnswerContext): ErrorResponse => {
    const retryAfterMs = Math.max(0, Math.ceil('retryAfterMs' in refusal ? refusal.retryAfterMs : 1_000));
    return {
      statusCode: 429,
      headers: { ...JSON_TYPE, 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1_000))) },
      body: jsonRpcError(at.jsonRpcId, JSONRPC_CODES.internalError, description, { retryAfterMs }),
    };
  };
}

type Row = (refusal: Refusal, at: AnswerContext) => ErrorResponse;

/** One row per code; descriptions are fixed and input-free: a response never echoes anything the client sent. */
const TABLE: Readonly<Record<RefusalCode, Row>> = {
  missing_token: challenged(401, 'missing_token', 'Authorization required'),
  invalid_request: challenged(400, 'invalid_request', CHALLENGE_DESCRIPTIONS.invalid_request),
  invalid_token: challenged(401, 'invalid_token', CHALLENGE_DESCRIPTIONS.invalid_token),
  insufficient_scope: challenged(403, 'insufficient_scope', CHALLENGE_DESCRIPTIONS.insufficient_scope),
  invalid_dpop_proof: challenged(401, 'invalid_dpop_proof', CHALLENGE_DESCRIPTIONS.invalid_dpop_proof),
  use_dpop_nonce: challenged(401, 'use_dpop_nonce', CHALLENGE_DESCRIPTIONS.use_dpop_nonce),
  // No challenge: a 401 would make every client authorize again for an outage of the gateway's own.
  auth_unavailable: () => ({
    statusCode: 503,
    headers: { ...NO_STORE_JSON, 'retry-after': String(RETRY_AFTER_SECONDS) },
    body: oauthBody('temporarily_unavailable', 'Authorization temporarily unavailable; retry later'),
  }),
  draining: (_refusal, at) => ({
    statusCode: 503,
    headers: { ...JSON_TYPE, 'retry-after': '1', connection: 'close' },
    body: jsonRpcError(at.jsonRpcId, JSONRPC_CODES.internalError, 'Gateway is shutting down; retry on another instance'),
  }),
  origin_forbidden: oauth(403, 'origin_forbidden', 'Origin not allowed'),
  host_forbidden: oauth(403, 'host_forbidden', 'Host or Origin not allowed for this gateway'),
  proxy_unauthenticated: oauth(403, 'proxy_unauthenticated', 'The decision listener answers only its configured proxy'),
  proxy_description_conflict: oauth(400, 'invalid_request', 'The request carries a request description of another proxy'),
  proxy_description_incomplete: oauth(500, 'decision_request_incomplete', 'The proxy did not describe the request completely'),
  not_found: () => bare('not_found', 404),
  bad_request: (refusal) => bare('bad_request', refusal.code === 'bad_request' ? refusal.status : 400),
  internal_error: () => bare('internal_error', 500),
  invalid_jsonrpc: jsonRpc(400, JSONRPC_CODES.invalidRequest, 'Request body must be a single JSON-RPC message'),
  body_required: jsonRpc(400, JSONRPC_CODES.invalidRequest, 'The gateway needs the request body to authorize this request'),
  invalid_params: jsonRpc(400, JSONRPC_CODES.invalidParams, 'Resource URI cannot be parsed'),
  payload_too_large: jsonRpc(413, JSONRPC_CODES.invalidRequest, 'Request body too large'),
  invalid_session_id: jsonRpc(400, JSONRPC_CODES.invalidRequest, 'Invalid Mcp-Session-Id header'),
  header_mismatch: jsonRpc(
    400,
    JSONRPC_CODES.headerMismatch,
    'Mcp-Method, Mcp-Name, Mcp-Param-* or MCP-Protocol-Version header missing, invalid or not matching the request body',
  ),
  upstream_unreachable: jsonRpc(502, JSONRPC_CODES.internalError, 'Upstream MCP server unavailable'),
  upstream_rejected: jsonRpc(502, JSONRPC_CODES.internalError, "Upstream MCP server rejected the gateway's credentials"),
  upstream_timeout: jsonRpc(504, JSONRPC_CODES.internalError, 'Upstream MCP server timed out'),
  list_unfilterable: jsonRpc(502, JSONRPC_CODES.internalError, 'Upstream MCP server answer could not be filtered for this caller'),
  upstream_credentials_failed: jsonRpc(502, JSONRPC_CODES.internalError, 'Gateway could not obtain credentials for the upstream MCP server'),
  // No challenge and nothing about the session: a foreign session must read as an unknown one.
  session_not_found: () => ({ statusCode: 404, headers: JSON_TYPE, body: jsonRpcError(null, JSONRPC_CODES.invalidRequest, 'Session not found') }),
  rate_limited: capacity('Rate limit exceeded; retry later'),
  too_many_streams: capacity('Too many open streams; close one or retry later'),
  too_many_requests: capacity('Too many requests in flight; retry when one has finished'),
  elicitation_required: (refusal, at) => elicitationResponse(refusal.code === 'elicitation_required' ? refusal.elicitation : undefined, at.jsonRpcId),
};

const ELICITATION_DESCRIPTION = 'This request requires connecting your account at the upstream service';

/** The text that hands a person the link where the client shows only text (a tool error, an error message). */
function connectText(message: string, url: string): string {
  return `${message.replace(/[\s.!]+$/, '')}: open ${url} in a browser to connect your account, then try again.`;
}

/**
 * The consent link (user_oauth) in the form the request allows (elicitation.ts): a URL elicitation
 * (2025-11-25 `URLElicitationRequiredError`, 2026-07-28 `InputRequiredResult`) to a client that declared it, the
 * link in a tool error's or an error's text to every other, and a 403 where no answer can carry one.
 */
function elicitationResponse(elicitation: UrlElicitation | undefined, jsonRpcId: string | number | null): ErrorResponse {
  const { answer, link, message } = elicitation ?? { answer: 'not_connected', message: ELICITATION_DESCRIPTION };
  // Answers that hand out a link are built only with one; without, the request is refused like any other.
  const linkless = { statusCode: 403, headers: NO_STORE_JSON, body: jsonRpcError(jsonRpcId, JSONRPC_CODES.invalidRequest, message) };
  if (!link || answer === 'not_connected') return linkless;
  const text = connectText(message, link.url);
  switch (answer) {
    case 'url_elicitation_error':
    case 'url_elicitation_refusal': {
      const data = { elicitations: [{ mode: 'url', elicitationId: link.elicitationId, url: link.url, message }] };
      const [status, id] = answer === 'url_elicitation_error' ? [200, jsonRpcId] : [403, null];
      return { statusCode: status, headers: NO_STORE_JSON, body: jsonRpcError(id, JSONRPC_CODES.urlElicitationRequired, text, data) };
    }
    case 'input_required': {
      const inputRequests = { [link.elicitationId]: { method: 'elicitation/create', params: { mode: 'url', message, url: link.url } } };
      const body = JSON.stringify({ jsonrpc: '2.0', id: jsonRpcId, result: { resultType: 'input_required', inputRequests } });
      return { statusCode: 200, headers: NO_STORE_JSON, body };
    }
    case 'tool_error': {
      // A tool result, not a protocol error (MCP tools "Error Handling"): the model and the person read its text.
      const body = JSON.stringify({ jsonrpc: '2.0', id: jsonRpcId, result: { content: [{ type: 'text', text }], isError: true } });
      return { statusCode: 200, headers: NO_STORE_JSON, body };
    }
    case 'link_error':
      return { statusCode: 200, headers: NO_STORE_JSON, body: jsonRpcError(jsonRpcId, JSONRPC_CODES.invalidRequest, text) };
  }
}

/** Maps a refusal to its row: the status, headers and body the client gets. */
export function errorResponse(error: GatewayError, challenge: ChallengeContext | undefined, jsonRpcId: string | number | null = null): ErrorResponse {
  return TABLE[error.code](error.refusal, { challenge, jsonRpcId });
}

/** What a refusal's answer needs to know about the decision so far (decision/state.ts). */
export interface RefusedRequest {
  readonly entry?: { readonly challenge: ChallengeContext } | undefined;
  readonly jsonRpcId?: string | number | null;
  /** CORS headers the request earned before it was refused. */
  readonly responseHeaders?: Readonly<Record<string, string>>;
}

/**
 * The answer to a refusal on a request: its row, with the challenge of the route it happened on and the CORS
 * headers the request earned before it was refused.
 */
export function refusalResponse(error: GatewayError, request: RefusedRequest | null | undefined): ErrorResponse {
  const response = errorResponse(error, request?.entry?.challenge, request?.jsonRpcId ?? null);
  const cors = request?.responseHeaders;
  return cors && Object.keys(cors).length > 0 ? { ...response, headers: { ...cors, ...response.headers } } : response;
}

/** An answer the decision gives without forwarding that is not a refusal (preflight, OPTIONS, 405). */
export interface EarlyAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
}

const ALLOW = { allow: 'GET, POST, DELETE, OPTIONS' } as const;

/** An authenticated OPTIONS on an MCP path: which methods exist (told only to an authenticated caller). */
export const OPTIONS_ANSWER: EarlyAnswer = Object.freeze({ status: 204, headers: ALLOW });
/** An authenticated request with a method the MCP transport does not use. */
export const METHOD_NOT_ALLOWED: EarlyAnswer = Object.freeze({ status: 405, headers: ALLOW });

/** A CORS preflight on an MCP endpoint, with the preflight headers `cors.ts` chose. */
export function preflightAnswer(headers: Readonly<Record<string, string>>): EarlyAnswer {
  return { status: 204, headers };
}
