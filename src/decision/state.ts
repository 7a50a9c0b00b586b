import type { AuthContext } from './ports.js';
import type { JsonRpcId, JsonRpcMessageFacts } from '../policy/jsonrpc.js';
import type { RouteRuntime } from './ports.js';

/**
 * One request's decision so far, filled in step by step; the front door that owns the request keeps it and reads
 * it to answer (a refusal's challenge needs the route, its JSON-RPC error the request's id) and to forward.
 */
export interface DecisionState {
  /** The route, once the path matched one. */
  entry: RouteRuntime | undefined;
  /** The largest body this request may have (the pinned config's `limits.max_body_bytes`). */
  readonly maxBodyBytes: number;
  /** Headers every answer to this request carries (CORS), once the Origin was allowed. */
  responseHeaders: Readonly<Record<string, string>>;
  /** The caller, once a token was accepted. */
  auth: AuthContext | undefined;
  /** The caller's scopes with `policy.implies` applied: what every scope check uses. */
  scopes: ReadonlySet<string>;
  /** The request's valid Mcp-Session-Id, once checked. */
  sessionId: string | undefined;
  /** The POST body's JSON-RPC message, once read. */
  message: JsonRpcMessageFacts | undefined;
  /** The JSON-RPC id a refusal answers with (null until a body was read). */
  jsonRpcId: JsonRpcId;
  /** What the gateway sets upstream: the credential and the identity assertion, once authorized. */
  upstreamHeaders: Readonly<Record<string, string>>;
}

const NO_SCOPES: ReadonlySet<string> = new Set();
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});
/** `responseHeaders` until CORS added some: a front door can skip setting none. */
export const NO_RESPONSE_HEADERS = NO_HEADERS;

/**
 * The state, plus the caller's raw token for the one step that needs it (RFC 8693 subject_token) in a private
 * field: no serialisation or inspection of the state can print it.
 */
class DecisionRecord implements DecisionState {
  entry: RouteRuntime | undefined = undefined;
  responseHeaders: Readonly<Record<string, string>> = NO_HEADERS;
  auth: AuthContext | undefined = undefined;
  scopes: ReadonlySet<string> = NO_SCOPES;
  sessionId: string | undefined = undefined;
  message: JsonRpcMessageFacts | undefined = undefined;
  jsonRpcId: JsonRpcId = null;
  upstreamHeaders: Readonly<Record<string, string>> = NO_HEADERS;
  #callerToken: string | undefined;

  constructor(readonly maxBodyBytes: number) {}

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

export function createDecisionState(maxBodyBytes: number): DecisionState {
  return new DecisionRecord(maxBodyBytes);
}

export function keepCallerToken(state: DecisionState, token: string): void {
  DecisionRecord.keepCallerToken(state, token);
}

export function callerToken(state: DecisionState): string {
  return DecisionRecord.callerToken(state);
}
