import { acceptedSchemes } from '../../config/sections/routes/dpop.js';
import { andThen, type MaybePromise } from '../../lib/maybe-promise.js';
import { effectiveScopes } from '../../policy/scopes.js';
import { extractAccessToken, hasAccessTokenInQuery, type TokenScheme } from '../bearer-token.js';
import { singleHeader, type RequestFacts } from '../facts.js';
import type { AuthContext, RouteRuntime } from '../ports.js';
import { GatewayError } from '../refusal.js';
import { keepCallerToken, matchedEntry, type DecisionState } from '../state.js';

/** RFC 6750 §2.2/§2.3 carriers the gateway refuses: a token must only ever travel in the Authorization header. */
function carriesTokenOutsideHeader(facts: RequestFacts): boolean {
  const contentType = singleHeader(facts.headers, 'content-type')?.toLowerCase() ?? '';
  const cookie = singleHeader(facts.headers, 'cookie') ?? '';
  return (
    hasAccessTokenInQuery(facts.url) ||
    contentType.startsWith('application/x-www-form-urlencoded') ||
    /(?:^|;)\s*access_token=/i.test(cookie)
  );
}

/**
 * The token, from the Authorization header only (read from the raw lines, so a repeated header is seen), verified
 * by the route's verifier, in a scheme the route takes (`routes[].dpop.mode`): a scheme it does not take counts as
 * no token. A token bound to a key (`cnf.jkt`) is accepted only as `DPoP` with a valid proof (RFC 9449 §7.1), never
 * as `Bearer` (§7.2). 400 invalid_request for a token elsewhere or a malformed header, 401 without a token, with an
 * invalid one or an invalid proof, 503 when the gateway cannot decide. At once for a bearer token verified before,
 * else a promise; throws or rejects with the refusal.
 */
export function authenticate(state: DecisionState): MaybePromise<void> {
  const { facts } = state;
  const entry = matchedEntry(state);
  if (carriesTokenOutsideHeader(facts)) throw new GatewayError('invalid_request', { reason: 'token_outside_header' });
  const extraction = extractAccessToken(facts.rawHeaders, state.runtime.config.limits.maxTokenBytes, facts.connection);
  switch (extraction.kind) {
    case 'missing':
      throw new GatewayError('missing_token');
    case 'invalid_request':
      throw new GatewayError('invalid_request', { reason: 'malformed_authorization_header' });
    case 'too_long':
      throw new GatewayError('invalid_token', { reason: 'token_too_long' });
    case 'token': {
      const { token, scheme } = extraction;
      if (!acceptedSchemes(entry.route.dpop.mode)[scheme]) throw new GatewayError('missing_token', { reason: `${scheme}_scheme_not_accepted` });
      return andThen(entry.verifier.verify(token, { clientAddress: facts.clientAddress, connection: facts.connection }), (auth) =>
        andThen(proofOfPossession(state, entry, auth, token, scheme), () => {
          state.auth = auth;
          state.scopes = effectiveScopes(auth.scopes, entry.route.policy.implies);
          keepCallerToken(state, token);
        }),
      );
    }
  }
}

/**
 * RFC 9449 §7: a bound token comes as `DPoP` with one proof by its key; an unbound one as `Bearer`. With a server
 * nonce, every answer names the current one (DPoP-Nonce, §9).
 */
function proofOfPossession(state: DecisionState, entry: RouteRuntime, auth: AuthContext, token: string, scheme: TokenScheme): MaybePromise<void> {
  const { boundKey } = auth;
  if (scheme === 'bearer') {
    if (boundKey !== undefined) throw new GatewayError('invalid_token', { reason: 'sender_constrained' });
    return undefined;
  }
  const { dpop } = entry;
  if (boundKey === undefined || dpop === undefined) throw new GatewayError('invalid_token', { reason: 'not_dpop_bound' });
  const nonce = dpop.currentNonce();
  if (nonce !== undefined) state.responseHeaders = { ...state.responseHeaders, 'dpop-nonce': nonce };
  const { facts } = state;
  return dpop.check({ proof: dpopProof(facts.rawHeaders), method: facts.method, host: facts.host, url: facts.url, accessToken: token, boundKey });
}

const DPOP = 'dpop';

/** RFC 9449 §4.3 check 1: exactly one DPoP header (read from the raw lines, so a repeated one is seen). */
function dpopProof(rawHeaders: readonly string[]): string {
  let proof: string | undefined;
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] as string;
    if (name.length !== DPOP.length || name.toLowerCase() !== DPOP) continue;
    if (proof !== undefined) throw new GatewayError('invalid_dpop_proof', { reason: 'proof_repeated' });
    proof = rawHeaders[index + 1];
  }
  if (proof === undefined || proof === '') throw new GatewayError('invalid_dpop_proof', { reason: 'proof_missing' });
  return proof;
}
