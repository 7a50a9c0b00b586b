/**
 * Reads a token's scopes: the RFC 6749 §3.3 space-delimited `scope` string, or a `scp` array of strings (Okta;
 * Entra's `scp` is a string). The caller passes `scope ?? scp`. Anything else (number, object, array with a
 * non-string) → undefined, meaning "no scopes". Tokens are compared exactly and case-sensitively elsewhere.
 */
export function parseScopeClaim(value: unknown): ReadonlySet<string> | undefined {
  if (typeof value === 'string') return new Set(value.split(' ').filter((scope) => scope !== ''));
  if (Array.isArray(value) && value.every((scope): scope is string => typeof scope === 'string')) {
    return new Set(value.filter((scope) => scope !== ''));
  }
  return undefined;
}

/** The token holds every required scope (exact, case-sensitive match). Runs on every request: no allocation. */
export function grantsAll(required: readonly string[], granted: ReadonlySet<string>): boolean {
  for (const scope of required) if (!granted.has(scope)) return false;
  return true;
}

/**
 * Granted scopes plus every scope they imply under `policy.implies` (already transitive): what every scope check
 * compares against. Challenges still name the required scopes themselves.
 */
export function effectiveScopes(
  granted: ReadonlySet<string>,
  implies: ReadonlyMap<string, readonly string[]>,
): ReadonlySet<string> {
  if (implies.size === 0) return granted;
  const effective = new Set(granted);
  for (const scope of granted) implies.get(scope)?.forEach((implied) => effective.add(implied));
  return effective;
}
