import type { CompiledConfig, CompiledRoute } from '../config/types.js';
import type { MaybePromise } from '../lib/maybe-promise.js';
import type { ChallengeContext } from './challenge.js';
import type { ElicitationRequest } from './elicitation.js';

/**
 * The decision's ports: the caller it works out and the services it needs, as interfaces of its own. The wiring
 * root (src/gateway/) builds the implementations (auth/, credentials/, grants/, session/, ratelimit/, identity/);
 * the decision imports none of them.
 */

/** What the gateway knows about the caller after a token was accepted. Never contains the token itself. */
export interface AuthContext {
  readonly issuer: string;
  /** `sub`; absent for some client_credentials tokens. */
  readonly subject: string | undefined;
  /** `client_id` (or `azp`), when the token carries it. */
  readonly clientId: string | undefined;
  readonly scopes: ReadonlySet<string>;
  readonly audience: readonly string[];
  /** Expiry, milliseconds since the epoch. */
  readonly expiresAt: number;
  readonly tokenKind: 'jwt' | 'introspection';
  /**
   * The RFC 7638 thumbprint of the key the token is bound to (`cnf.jkt`, RFC 9449 §6): such a token is accepted
   * only with a DPoP proof signed by that key. Absent for a bearer token.
   */
  readonly boundKey?: string | undefined;
}

/** What a verifier may know about the request besides its token. */
export interface VerifyRequest {
  /** The client's network address (the TCP peer): introspection shares its capacity fairly between clients. */
  readonly clientAddress?: string | undefined;
  /** The connection the token came on (its socket): the token's cache key is remembered for it (`perConnection`). */
  readonly connection?: object | undefined;
}

/**
 * Validates a bearer token for one route. Gives an AuthContext, or rejects with a GatewayError whose code is
 * `invalid_token` (the token is bad) or `auth_unavailable` (the gateway cannot decide now). Never anything else.
 * A verdict at hand (a token verified before) comes back at once rather than as a promise; a refusal always comes
 * as a rejected promise.
 */
export interface TokenVerifier {
  verify(token: string, request?: VerifyRequest): MaybePromise<AuthContext>;
  /** True once the verifier can decide (e.g. JWKS fetched at least once). */
  isReady(): boolean;
  /** Warm-up at start (fetch JWKS); never throws. */
  warm(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Headers that authenticate the gateway to one route's upstream. Takes the caller's AuthContext and token so that
 * per-principal credentials (RFC 8693 token exchange) fit the same seam: the token is only ever sent to the
 * configured exchange endpoint as `subject_token`, never to the upstream, and is never among the headers.
 */
export interface UpstreamCredentialProvider {
  /**
   * `request`: what a per-user grant needs to ask for consent in the request's own protocol revision. A static
   * credential comes at once; one that may have to be fetched comes as a promise (and any refusal as its rejection).
   */
  headersFor(auth: AuthContext, subjectToken: string, request?: ElicitationRequest): MaybePromise<Readonly<Record<string, string>>>;
  /**
   * The upstream answered 401 to a request sent with `sent`: a per-user grant (user_oauth) is dropped so the next
   * request asks for consent again. Never throws.
   */
  upstreamRejected?(auth: AuthContext, sent: Readonly<Record<string, string>>): Promise<void>;
}

/**
 * What the store says about a session id for this caller: bound to them (`owned`), bound to someone else
 * (`foreign`), not bound at all (`unknown`), or the store could not answer (`unavailable`).
 */
export type BindingState = 'owned' | 'foreign' | 'unknown' | 'unavailable';

/** Who owns which Mcp-Session-Id on one route. */
export interface SessionBindings {
  /** Looks the binding up; an owned binding's idle TTL starts again. */
  check(sessionId: string, auth: AuthContext): Promise<BindingState>;
  /** Binds a session id the upstream just issued to the caller that opened it; false when the store did not take it. */
  bind(sessionId: string, auth: AuthContext): Promise<boolean>;
  /**
   * Binds a session id nobody holds yet to this caller, atomically (one claimant wins across replicas), and says
   * whose it is now. For front doors that never see the upstream's initialize answer.
   */
  claim(sessionId: string, auth: AuthContext): Promise<BindingState>;
  release(sessionId: string): Promise<void>;
}

export interface RateLimiter {
  /** Resolves when the caller may proceed; rejects with `rate_limited` (429 + Retry-After) when not. */
  take(auth: AuthContext): Promise<void>;
}

export interface IdentityAsserter {
  /** Lowercase header name the assertion travels in. */
  readonly header: string;
  /** A fresh assertion for one request: `scopes` are the caller's effective scopes (policy.implies applied). */
  assert(auth: AuthContext, scopes: ReadonlySet<string>): Promise<string>;
}

/** What one caller may hold at once on this process (streams, requests in flight). */
export interface PrincipalSlots {
  /** Takes a slot for the caller; the release to call when it ends, or `undefined` at the cap. */
  acquire(auth: AuthContext, max: number): (() => void) | undefined;
  /** Slots the caller holds (tests, metrics). */
  open(auth: AuthContext): number;
}

/** A request carrying a DPoP-bound token, as the proof must describe it (RFC 9449 §4.3). */
export interface DpopRequest {
  /** The one `DPoP` header's value. */
  readonly proof: string;
  /** The method as the client sent it (through the decision listener: as the proxy describes it). */
  readonly method: string;
  /** The Host the client asked for, when known. */
  readonly host: string | undefined;
  /** The request target as the client sent it (its query is no part of `htu`). */
  readonly url: string;
  readonly accessToken: string;
  /** The token's `cnf.jkt`. */
  readonly boundKey: string;
}

/** Checks DPoP proofs for one route: the proof itself, its jti across replicas, the server nonce. */
export interface DpopProofChecker {
  /**
   * Resolves when the proof holds; rejects with `invalid_dpop_proof`, `use_dpop_nonce` (with the nonce to use) or
   * `auth_unavailable` (the replay cache cannot answer). Never anything else.
   */
  check(request: DpopRequest): Promise<void>;
  /** The nonce proofs must carry now, for the DPoP-Nonce header of every answer; absent unless the route requires one. */
  currentNonce(): string | undefined;
}

/** Everything a request on one route needs, built once per compiled config by the wiring root. */
export interface RouteRuntime {
  readonly route: CompiledRoute;
  readonly verifier: TokenVerifier;
  readonly credentials: UpstreamCredentialProvider;
  /** Signs the identity assertion sent upstream, when the route has `upstream.identity`. */
  readonly identity: IdentityAsserter | undefined;
  readonly sessions: SessionBindings;
  /** Absent when the route has no `rate_limit`. */
  readonly rateLimiter: RateLimiter | undefined;
  /** What the route's 401 and 403 challenges say (`routeChallenge` in challenge.ts). */
  readonly challenge: ChallengeContext;
  /** Absent when the route takes bearer tokens only (`dpop.mode: bearer_only`). */
  readonly dpop: DpopProofChecker | undefined;
}

/** What the decision reads of one compiled config: its settings and its routes by normalised path. */
export interface DecisionRuntime {
  readonly config: CompiledConfig;
  readonly routes: ReadonlyMap<string, RouteRuntime>;
  /** Per caller on this process, across reloads: standalone streams, and requests in flight (proxy door). */
  readonly slots: { readonly streams: PrincipalSlots; readonly requestsInFlight: PrincipalSlots };
}

/**
 * Where a traced request's decision is recorded (an OpenTelemetry span, src/doors/shared/tracing.ts): told of each
 * step as it starts, so the span shows which step ran when and, on a refusal, which one refused; then of the verdict.
 */
export interface DecisionTrace {
  step(name: string, stage: 'admit' | 'authorize'): void;
  /** `allowed` (authorized), `answered` (an early answer: preflight, 405), or the refusal's code (told by the door). */
  decided(verdict: string): void;
}
