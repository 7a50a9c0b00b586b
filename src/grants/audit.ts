import type { Logger } from 'pino';

/** What happened to a user's grant. */
export type GrantAction = 'grant' | 'refresh' | 'revoke' | 'drop';

/** Who caused it: the user (consent or grants page), an operator (`grants revoke`), or the gateway itself. */
export type GrantActor = 'user' | 'operator' | 'gateway';

export interface GrantAuditFacts {
  readonly action: GrantAction;
  readonly route: string;
  /** Keyed digest of the principal (GrantStore.digest): correlates lines, reveals nobody. */
  readonly principal: string;
  readonly outcome: 'ok' | 'denied' | 'failed';
  readonly by: GrantActor;
  /** A fixed code (`upstream_401`, `token_endpoint_refused`, ...), never an answer's text. */
  readonly reason?: string;
}

/** One `grant audit` line per grant, refresh, revocation or dropped grant. Never a token. */
export type GrantAudit = (facts: GrantAuditFacts) => void;

export function grantAudit(logger: Logger | undefined): GrantAudit {
  return (facts) => logger?.info({ ...facts }, 'grant audit');
}
