/** Where the scope a client requests comes from (MCP authorization, "Scope Selection Strategy"). */
export type ScopeSource = 'challenge' | 'scopes_supported' | 'omitted';

export interface ScopeSelection {
  /** Space-separated, or undefined: the `scope` parameter is omitted. */
  readonly scope?: string;
  readonly source: ScopeSource;
}

/**
 * The challenge's `scope` is authoritative (no set relation to scopes_supported is assumed); else every entry of the
 * protected resource metadata's `scopes_supported`; else no scope parameter at all.
 */
export function selectScope(challengeScope: string | undefined, scopesSupported: readonly string[] | undefined): ScopeSelection {
  if (challengeScope !== undefined && challengeScope.trim() !== '') return { scope: challengeScope.trim(), source: 'challenge' };
  if (scopesSupported !== undefined && scopesSupported.length > 0) return { scope: scopesSupported.join(' '), source: 'scopes_supported' };
  return { source: 'omitted' };
}

/** The scopes of `scope` strings, each once, in first-seen order (for a step-up that keeps what was granted). */
export function unionScopes(...scopes: readonly (string | undefined)[]): string {
  const tokens = scopes.flatMap((scope) => scope?.split(' ') ?? []).filter((token) => token !== '');
  return [...new Set(tokens)].join(' ');
}
