import type { AuthContext } from '../auth/types.js';
import type { JsonRpcMessageFacts } from '../policy/jsonrpc.js';
import { requestOutcome, type RequestOutcome } from './metrics.js';

/** What is known about one request on a route when its answer starts (or when the client gave up first). */
export interface AuditFacts {
  readonly route: string;
  readonly httpMethod: string;
  /** Present once the token was accepted. */
  readonly auth: AuthContext | undefined;
  /** Present once a POST body was inspected. */
  readonly message: JsonRpcMessageFacts | undefined;
  /** Undefined when the client went away before any answer. */
  readonly status: number | undefined;
  readonly latencyMs: number;
}

/** The `audit` log line: who did what on which route, and how it ended. Never a token or a secret. */
export interface AuditRecord {
  readonly route: string;
  /** `<issuer>#<subject>` (empty subject for tokens without `sub`); absent when no token was accepted. */
  readonly principal?: string;
  readonly client_id?: string;
  readonly http_method: string;
  readonly jsonrpc_method?: string;
  readonly tool?: string;
  readonly resource?: string;
  readonly prompt?: string;
  readonly outcome: RequestOutcome;
  readonly status?: number;
  readonly latency_ms: number;
}

/** Client-chosen names are logged, but never at unbounded length. */
export const MAX_AUDIT_NAME_LENGTH = 200;

function bounded(value: string | undefined): string | undefined {
  return value === undefined || value.length <= MAX_AUDIT_NAME_LENGTH ? value : `${value.slice(0, MAX_AUDIT_NAME_LENGTH)}…`;
}

export function auditRecord(facts: AuditFacts): AuditRecord {
  const { auth, message } = facts;
  const optional: Record<string, string | number | undefined> = {
    principal: auth && `${auth.issuer}#${auth.subject ?? ''}`,
    client_id: bounded(auth?.clientId),
    jsonrpc_method: bounded(message?.method),
    tool: bounded(message?.toolName),
    resource: bounded(message?.resourceUri),
    prompt: bounded(message?.promptName),
    status: facts.status,
  };
  const present = Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined));
  return {
    route: facts.route,
    http_method: facts.httpMethod,
    outcome: requestOutcome(facts.status),
    latency_ms: Math.round(facts.latencyMs * 10) / 10,
    ...present,
  };
}
