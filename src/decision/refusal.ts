import type { ElicitationAnswer } from './elicitation.js';

/** What the client must complete before retrying, and how the answer carries it. */
export interface UrlElicitation {
  readonly answer: ElicitationAnswer;
  /** Shown to the user; fixed per route. */
  readonly message: string;
  /** The single-use consent link; absent for answers that carry none. */
  readonly link?: { readonly url: string; readonly elicitationId: string };
}

/** The codes whose answer needs more than the code: each with the fields it requires. */
interface RequiredFields {
  /** Every scope the operation needs: the 403 challenge names them all. */
  readonly insufficient_scope: { readonly requiredScopes: readonly string[] };
  /** How long the client should wait (Retry-After). */
  readonly rate_limited: { readonly retryAfterMs: number };
  readonly too_many_streams: { readonly retryAfterMs: number };
  readonly too_many_requests: { readonly retryAfterMs: number };
  /** The consent link and the form the request's revision takes. */
  readonly elicitation_required: { readonly elicitation: UrlElicitation };
  /** RFC 9449 §9: the nonce the next proof must carry (the DPoP-Nonce header). */
  readonly use_dpop_nonce: { readonly nonce: string };
  /** A request the HTTP framework could not parse: the precise 4xx status it determined. */
  readonly bad_request: { readonly status: number };
}

/**
 * Every way a request ends without being forwarded, or fails after: the closed set the response table
 * (responses.ts) maps to a status, headers and body, exhaustively. A refusal never carries a token or a secret.
 */
export type RefusalCode =
  | keyof RequiredFields
  /** No Authorization header, or a scheme other than Bearer → 401 without `error`. */
  | 'missing_token'
  /** Malformed or duplicated Authorization header, token in query/body → 400 invalid_request. */
  | 'invalid_request'
  /** Token present but not acceptable → 401 invalid_token. */
  | 'invalid_token'
  /** A DPoP-bound token whose proof is missing, malformed or fails a check of RFC 9449 §4.3 → 401 invalid_dpop_proof. */
  | 'invalid_dpop_proof'
  /** The gateway cannot decide (JWKS / introspection unreachable or malformed) → 503 + Retry-After. */
  | 'auth_unavailable'
  /** Request Origin not allowed for the route → 403 without challenge. */
  | 'origin_forbidden'
  /** Host (or, on a loopback gateway, Origin) fails DNS rebinding protection → 403 before authentication. */
  | 'host_forbidden'
  /** Body is not one JSON-RPC message (batch, not JSON, not an object) → 400 with a JSON-RPC error. */
  | 'invalid_jsonrpc'
  /** A door without the body cannot decide a per-operation policy for this caller → 400; the proxy must send it. */
  | 'body_required'
  /** A parameter policy must read cannot be (a resource URI without a normal form) → 400, JSON-RPC -32602. */
  | 'invalid_params'
  | 'payload_too_large'
  /** No route, metadata document or key set at this path → 404. */
  | 'not_found'
  /** A bug: nothing the client did → 500, generic body; the log has the error. */
  | 'internal_error'
  | 'upstream_unreachable'
  /** Upstream answered 401/403: its challenge is never relayed to the client. */
  | 'upstream_rejected'
  | 'upstream_timeout'
  /** The upstream's list answer could not be filtered (policy.hide_unauthorized): withheld, never passed on. */
  | 'list_unfilterable'
  /** No upstream credential could be obtained (token endpoint down, refused, malformed answer) → 502. */
  | 'upstream_credentials_failed'
  /** Mcp-Session-Id outside visible ASCII or over 256 bytes → 400. */
  | 'invalid_session_id'
  /** Mcp-Session-Id unknown, expired or bound to another principal → 404, exactly as an unknown session. */
  | 'session_not_found'
  /** Mcp-Method / Mcp-Name headers disagree with the body (MCP 2026-07-28 HeaderMismatch) → 400. */
  | 'header_mismatch'
  /** Shutting down: new requests are refused so clients go to another replica. */
  | 'draining'
  /** The decision listener was asked without `decision.secret`: the caller is not the configured proxy → 403. */
  | 'proxy_unauthenticated'
  /** The question carries another proxy's description of a request besides the configured proxy's → 400. */
  | 'proxy_description_conflict'
  /** The configured proxy described the request incompletely (its config is broken) → 500, never decided. */
  | 'proxy_description_incomplete';

type FieldsOf<C extends RefusalCode> = C extends keyof RequiredFields ? RequiredFields[C] : Record<never, never>;

/** One refusal: its code and exactly the fields that code requires. */
export type Refusal = { [C in RefusalCode]: { readonly code: C } & FieldsOf<C> }[RefusalCode];

export interface RefusalOptions {
  /** Internal, log-safe detail (an error code such as `ERR_JWT_EXPIRED`, never input). */
  readonly reason?: string;
  readonly cause?: unknown;
}

/** A code's options: its required fields are not optional. */
export type RefusalArguments<C extends RefusalCode> = C extends keyof RequiredFields
  ? [options: RefusalOptions & RequiredFields[C]]
  : [options?: RefusalOptions];

/** A code with its options: `new GatewayError('insufficient_scope')` without `requiredScopes` does not compile. */
type GatewayErrorArguments = { [C in RefusalCode]: [code: C, ...RefusalArguments<C>] }[RefusalCode];

/** A refusal thrown (or rejected with) by a decision step or a service behind one; rendered by responses.ts. */
export class GatewayError extends Error {
  readonly code: RefusalCode;
  readonly reason: string | undefined;
  /** The refusal with its required fields, for the response table. */
  readonly refusal: Refusal;

  constructor(...[code, options]: GatewayErrorArguments) {
    const { reason, cause, ...fields } = (options ?? {}) as RefusalOptions & Record<string, unknown>;
    super(reason ? `${code}: ${reason}` : code, { cause });
    this.name = 'GatewayError';
    this.code = code;
    this.reason = reason;
    this.refusal = { code, ...fields } as Refusal;
  }

  /** insufficient_scope: every scope the operation needs. */
  get requiredScopes(): readonly string[] | undefined {
    return this.refusal.code === 'insufficient_scope' ? this.refusal.requiredScopes : undefined;
  }

  /** rate_limited, too_many_streams, too_many_requests: how long the client should wait. */
  get retryAfterMs(): number | undefined {
    return 'retryAfterMs' in this.refusal ? this.refusal.retryAfterMs : undefined;
  }

  /** elicitation_required: the consent link and the answer's form. */
  get elicitation(): UrlElicitation | undefined {
    return this.refusal.code === 'elicitation_required' ? this.refusal.elicitation : undefined;
  }
}

export function isGatewayError(error: unknown): error is GatewayError {
  return error instanceof GatewayError;
}
