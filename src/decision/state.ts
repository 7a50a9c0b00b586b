import type { JsonRpcId, JsonRpcMessageFacts } from '../policy/jsonrpc.js';
import type { RequestFacts } from './facts.js';
import type { AuthContext, DecisionRuntime, DecisionTrace, RouteRuntime } from './ports.js';

/**
 * Which front door asks: the gateway's own proxy (it sees the upstream's answers, and takes stream and request
 * slots), or the decision listener a proxy in front asks (it never sees answers; with or without the body).
 */
export type Door = 'proxy' | 'listener';

/**
 * One request's decision so far, filled in step by step; the front door that owns the request keeps it and reads
 * it to answer (a refusal's challenge needs the route, its JSON-RPC error the request's id) and to forward.
 */
export interface DecisionState {
  /** The config the request is pinned to (a reload does not change it midway). */
  readonly runtime: DecisionRuntime;
  readonly facts: RequestFacts;
  readonly door: Door;
  /** The largest body this request may have (the pinned config's `limits.max_body_bytes`). */
  readonly maxBodyBytes: number;
  /** The route, once the path matched one. */
  entry: RouteRuntime | undefined;
  /** Headers every answer to this request carries (CORS), once the Origin was allowed. */
  responseHeaders: Readonly<Record<string, string>>;
  /** The caller, once a token was accepted. */
  auth: AuthContext | undefined;
  /** The caller's scopes with `policy.implies` applied: what every scope check uses. */
  scopes: ReadonlySet<string>;
  /** The request's valid Mcp-Session-Id, once checked. */
  sessionId: string | undefined;
  /** The POST body as received, once the door has it (undefined: none, or a door that does not see it). */
  body: Buffer | undefined;
  /** The POST body's JSON-RPC message, once read (or, where trusted, its mirrored headers). */
  message: JsonRpcMessageFacts | undefined;
  /** The JSON-RPC id a refusal answers with (null until a body was read). */
  jsonRpcId: JsonRpcId;
  /** What the gateway sets upstream: the credential and the identity assertion, once authorized. */
  upstreamHeaders: Readonly<Record<string, string>>;
  /** Gives back the stream or request slot the request took (proxy door), when its answer ends. */
  releaseSlot: (() => void) | undefined;
  /** The request's span, told of each step as it starts; absent unless the request is traced. */
  trace: DecisionTrace | undefined;
}

const NO_SCOPES: ReadonlySet<string> = new Set();
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
/** `responseHeaders` until CORS added some: a front door can skip setting none. */
export const NO_RESPONSE_HEADERS = NO_HEADERS;

/**
 * The state. The request's facts (its headers hold the caller's token), the runtime, and the caller's raw token for
 * the one step that needs it (RFC 8693 subject_token) are private fields behind getters: no serialisation or
 * inspection of the state can print them.
 */
class DecisionRecord implements DecisionState {
  readonly #runtime: DecisionRuntime;
  readonly #facts: RequestFacts;
  readonly door: Door;
  readonly maxBodyBytes: number;
  entry: RouteRuntime | undefined = undefined;
  responseHeaders: Readonly<Record<string, string>> = NO_HEADERS;
  auth: AuthContext | undefined = undefined;
  scopes: ReadonlySet<string> = NO_SCOPES;
  sessionId: string | undefined = undefined;
  body: Buffer | undefined = undefined;
  message: JsonRpcMessageFacts | undefined = undefined;
  jsonRpcId: JsonRpcId = null;
  upstreamHeaders: Readonly<Record<string, string>> = NO_HEADERS;
  releaseSlot: (() => void) | undefined = undefined;
  trace: DecisionTrace | undefined = undefined;
  #callerToken: string | undefined;

  constructor(runtime: DecisionRuntime, facts: RequestFacts, door: Door) {
    this.#runtime = runtime;
    this.#facts = facts;
    this.door = door;
    this.maxBodyBytes = runtime.config.limits.maxBodyBytes;
  }

  get runtime(): DecisionRuntime {
    return this.#runtime;
  }

  get facts(): RequestFacts {
    return this.#facts;
  }

  static keepCallerToken(state: DecisionState, token: string): void {
    recordOf(state).#callerToken = token;
  }

  static callerToken(state: DecisionState): string {
    const token = recordOf(state).#callerToken;
    if (token === undefined) throw new Error('the caller token was not kept: authentication did not run');
    return token;
  }
}

function recordOf(state: DecisionState): DecisionRecord {
  if (!(state instanceof DecisionRecord)) throw new Error('decision state not made by createDecisionState');
  return state;
}

export function createDecisionState(runtime: DecisionRuntime, facts: RequestFacts, door: Door): DecisionState {
  return new DecisionRecord(runtime, facts, door);
}

export function keepCallerToken(state: DecisionState, token: string): void {
  DecisionRecord.keepCallerToken(state, token);
}

export function callerToken(state: DecisionState): string {
  return DecisionRecord.callerToken(state);
}

/** The route the request matched: every step after route matching runs only then. */
export function matchedEntry(state: DecisionState): RouteRuntime {
  if (!state.entry) throw new Error('a decision step ran before the route was matched');
  return state.entry;
}

/** The route and caller of a state the admission steps accepted (the authorization steps run only then). */
export function admitted(state: DecisionState): { readonly entry: RouteRuntime; readonly auth: AuthContext } {
  const { entry, auth } = state;
  if (!entry || !auth) throw new Error('an authorization step ran before admission accepted the caller');
  return { entry, auth };
}
