/**
 * One finding of `probe`: what was checked, how it went, and the clause of the specification it rests on. Messages
 * name URLs, scopes and claim names, never a token, an authorization code or a secret.
 */
export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface Check {
  readonly id: string;
  readonly status: CheckStatus;
  readonly message: string;
  /** The clause, e.g. "RFC 9728 §3.3" or "MCP authorization: scope selection". */
  readonly spec: string;
}

/** The clauses checks cite, named once so the same rule always cites the same text. */
export const SPEC = {
  challenge401: 'MCP authorization: 401 challenge (RFC 9728 §5.1)',
  everyRequest: 'MCP authorization: authorization on every HTTP request',
  wwwAuthenticateSyntax: 'RFC 9110 §11.6.1, RFC 6750 §3',
  challengeScope: 'MCP authorization: scope selection (SEP-835)',
  noErrorWithoutToken: 'RFC 6750 §3.1',
  prmDiscovery: 'RFC 9728 §3.1, MCP authorization: protected resource metadata discovery',
  prmResource: 'RFC 9728 §3.3, RFC 8707 §2',
  prmAuthorizationServers: 'RFC 9728 §2, MCP authorization: authorization server discovery',
  offlineAccess: 'MCP authorization: scopes_supported (SEP-2207)',
  asMetadata: 'RFC 8414 §3.1, OpenID Connect Discovery 1.0 §4',
  asIssuer: 'RFC 8414 §3.3',
  pkce: 'MCP authorization: PKCE (code_challenge_methods_supported)',
  https: 'MCP authorization: communication security (OAuth 2.1 §1.5)',
  addresses: 'MCP security best practices: server-side request forgery',
  registration: 'MCP authorization: client registration approaches',
  scopeSelection: 'MCP authorization: scope selection strategy',
  tokenFormat: 'RFC 9068 §2, RFC 7662',
  tokenIssuer: 'RFC 9068 §4 (iss), MCP authorization: token audience binding',
  tokenAudience: 'RFC 8707 §2, RFC 9068 §4 (aud)',
  tokenLifetime: 'RFC 7519 §4.1.4, §4.1.5',
  tokenSignature: 'RFC 9068 §4, RFC 7515',
  tokenAccepted: 'MCP authorization: token usage, RFC 6750 §3.1',
  tokenBinding: 'RFC 9449 §6, §7.1 (MCP DPoP extension SEP-1932)',
} as const;

export function hasFailure(checks: readonly Check[]): boolean {
  return checks.some((check) => check.status === 'fail');
}
