import type { ElicitationAnswer } from './consent/elicitation.js';

/**
 * Every failure a request can end in. The closed union is mapped exhaustively to a status and a response
 * shape in one place (src/auth/responses.ts); a `GatewayError` never carries a token or a secret.
 */
export type GatewayErrorCode =
  /** No Authorization header, or a scheme other than Bearer → 401 without `error`. */
  | 'missing_token'
  /** Malformed or duplicated Authorization header, token in query/body → 400 invalid_request. */
  | 'invalid_request'
  /** Token present but not acceptable → 401 invalid_token. */
  | 'invalid_token'
  /** Token valid, scopes missing → 403 insufficient_scope. */
  | 'insufficient_scope'
  /** The gateway cannot decide (JWKS / introspection unreachable or malformed) → 503 + Retry-After. */
  | 'auth_unavailable'
  /** Request Origin not allowed for the route → 403 without challenge. */
  | 'origin_forbidden'
  /** Host (or, on a loopback gateway, Origin) fails DNS rebinding protection → 403 before authentication. */
  | 'host_forbidden'
  /** Body is not one JSON-RPC message (batch, not JSON, not an object) → 400 with a JSON-RPC error. */
  | 'invalid_jsonrpc'
  /**
   * The decision listener got no body for a request whose route decides per operation, and the request does not
   * declare MCP 2026-07-28 (whose mirrored headers would do) → 400; the proxy must send the body.
   */
  | 'body_required'
  /** A parameter policy must read cannot be (a resource URI without a normal form) → 400, JSON-RPC -32602. */
  | 'invalid_params'
  | 'payload_too_large'
  | 'not_found'
  | 'upstream_unreachable'
  /** Upstream answered 401/403: its challenge is never relayed to the client. */
  | 'upstream_rejected'
  | 'upstream_timeout'
  /** No upstream credential could be obtained (token endpoint down, refused, malformed answer) → 502. */
  | 'upstream_credentials_failed'
  /** Mcp-Session-Id outside visible ASCII or over 256 bytes → 400. */
  | 'invalid_session_id'
  /** Mcp-Session-Id unknown, expired or bound to another principal → 404, exactly as an unknown session. */
  | 'session_not_found'
  /** Mcp-Method / Mcp-Name headers disagree with the body (MCP 2026-07-28 HeaderMismatch) → 400. */
  | 'header_mismatch'
  /** The principal exceeded the route's rate limit → 429 + Retry-After. */
  | 'rate_limited'
  /** The principal already holds `limits.max_streams_per_principal` standalone SSE streams → 429 + Retry-After. */
  | 'too_many_streams'
  /** The principal already has `limits.max_concurrent_requests_per_principal` requests in flight → 429 + Retry-After. */
  | 'too_many_requests'
  /**
   * The caller has no grant at the upstream's authorization server yet (user_oauth): a URL elicitation of a consent
   * link, in the form the request's protocol revision prescribes.
   */
  | 'elicitation_required'
  /** Shutting down: new requests are refused so clients go to another replica. */
  | 'draining'
  /** The decision listener was asked without `decision.secret`: the caller is not the configured proxy → 403. */
  | 'proxy_unauthenticated'
  /** The question carries another proxy's description of a request besides the configured proxy's → 400. */
  | 'proxy_description_conflict'
  /** The configured proxy described the request incompletely (its config is broken) → 500, never decided. */
  | 'proxy_description_incomplete';

export interface GatewayErrorOptions {
  /** Internal, log-safe detail (an error code such as `ERR_JWT_EXPIRED`, never input). */
  readonly reason?: string;
  /** For insufficient_scope: every scope the operation needs. */
  readonly requiredScopes?: readonly string[];
  /** For rate_limited: how long the client should wait. */
  readonly retryAfterMs?: number;
  /** For elicitation_required. */
  readonly elicitation?: UrlElicitation;
  readonly cause?: unknown;
}

/** What the client must complete before retrying, and how the answer carries it. */
export interface UrlElicitation {
  readonly answer: ElicitationAnswer;
  /** Shown to the user; fixed per route. */
  readonly message: string;
  /** The single-use consent link; absent for answers that carry none. */
  readonly link?: { readonly url: string; readonly elicitationId: string };
}

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly reason: string | undefined;
  readonly requiredScopes: readonly string[] | undefined;
  readonly retryAfterMs: number | undefined;
  readonly elicitation: UrlElicitation | undefined;

  constructor(code: GatewayErrorCode, options: GatewayErrorOptions = {}) {
    super(options.reason ? `${code}: ${options.reason}` : code, { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.reason = options.reason;
    this.requiredScopes = options.requiredScopes;
    this.retryAfterMs = options.retryAfterMs;
    this.elicitation = options.elicitation;
  }
}

export function isGatewayError(error: unknown): error is GatewayError {
  return error instanceof GatewayError;
}
