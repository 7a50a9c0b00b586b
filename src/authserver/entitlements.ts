import type { ClaimCondition, Entitlement } from '../config/types.js';

function matches(condition: ClaimCondition, claims: Readonly<Record<string, unknown>>): boolean {
  const value = claims[condition.claim];
  if (condition.equals !== undefined) return value === condition.equals;
  return value === condition.includes || (Array.isArray(value) && value.includes(condition.includes));
}

/** The scopes a person may be granted: the union of every entitlement whose condition their ID token claims meet. */
export function entitledScopes(entitlements: readonly Entitlement[], claims: Readonly<Record<string, unknown>>): string[] {
  const scopes = new Set<string>();
  for (const entry of entitlements) {
    if (entry.when === undefined || matches(entry.when, claims)) entry.scopes.forEach((scope) => scopes.add(scope));
  }
  return [...scopes];
}

/**
 * What a consent on one route holds: the route's scopes the person is entitled to, all of them, so a later refresh
 * may ask for any (step-up without a new sign-in); what a token carries is further cut to what its request asks.
 */
export function consentableScopes(routeScopes: readonly string[], entitled: readonly string[]): string[] {
  const allowed = new Set(entitled);
  return routeScopes.filter((scope) => allowed.has(scope));
}
