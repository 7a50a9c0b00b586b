import type { AuthContext } from '../decision/index.js';
import { principalDigest } from '../cache/cache-keys.js';
import { perObject } from '../lib/memo.js';
import type { JsonRpcMessageFacts } from '../policy/jsonrpc.js';
import { VettedFields } from './logger.js';
import { requestOutcome, type RequestOutcome } from './metrics.js';

/** What is known about one request on a route when its answer starts (or when the client gave up first). */
export interface AuditFacts {
  /** The gateway's id of the request (`X-Request-Id` upstream), when the front door has one. */
  readonly requestId?: string;
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

/** How an audit line names the accepted caller (`log.audit_subject`). */
export type AuditPrincipal = (auth: AuthContext) => string;

/** `<issuer>#<subject>`, empty subject for tokens without `sub`. */
export const clearPrincipal: AuditPrincipal = (auth) => `${auth.issuer}#${auth.subject ?? ''}`;

/**
 * The principal's keyed digest (HMAC with the cache key secret), the same value the grant audit lines and
 * `grants list` show for that person: log readers can follow one caller, and without the key cannot confirm a
 * guessed subject.
 */
export function hashedPrincipal(keySecret: Buffer): AuditPrincipal {
  // Once per AuthContext the token caches hand out, not once per request.
  return perObject((auth: AuthContext) => principalDigest(keySecret, auth.issuer, auth.subject ?? ''));
}

export function auditPrincipal(mode: 'clear' | 'hashed', keySecret: Buffer): AuditPrincipal {
  return mode === 'hashed' ? hashedPrincipal(keySecret) : clearPrincipal;
}

/** The `audit` log line: who did what on which route, and how it ended. Never a token or a secret. */
export interface AuditRecord {
  readonly reqId?: string;
  readonly route: string;
  /** The caller as `log.audit_subject` names it (AuditPrincipal); absent when no token was accepted. */
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

/** A client-chosen name (tool, resource, prompt, client id) cut to `MAX_AUDIT_NAME_LENGTH`; spans record them alike. */
export function bounded(value: string): string {
  return value.length <= MAX_AUDIT_NAME_LENGTH ? value : `${value.slice(0, MAX_AUDIT_NAME_LENGTH)}…`;
}

type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** Its keys are the AuditRecord's, none sensitive, and its values strings and numbers: the logger need not redact it. */
class AuditLine extends VettedFields {}

/** Built field by field (once per request): absent facts leave their field out rather than `undefined`. */
export function auditRecord(facts: AuditFacts, principalOf: AuditPrincipal): AuditRecord {
  const { auth, message, status } = facts;
  // Insertion order is the line's field order: the request id first, as a logger binding would place it.
  const record = new AuditLine() as Writable<AuditRecord>;
  if (facts.requestId !== undefined) record.reqId = facts.requestId;
  record.route = facts.route;
  record.http_method = facts.httpMethod;
  record.outcome = requestOutcome(status);
  record.latency_ms = Math.round(facts.latencyMs * 10) / 10;
  if (auth) {
    record.principal = principalOf(auth);
    if (auth.clientId !== undefined) record.client_id = bounded(auth.clientId);
  }
  if (message) {
    if (message.method !== undefined) record.jsonrpc_method = bounded(message.method);
    if (message.toolName !== undefined) record.tool = bounded(message.toolName);
    if (message.resourceUri !== undefined) record.resource = bounded(message.resourceUri);
    if (message.promptName !== undefined) record.prompt = bounded(message.promptName);
  }
  if (status !== undefined) record.status = status;
  return record;
}
