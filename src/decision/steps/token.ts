import { andThen, type MaybePromise } from '../../lib/maybe-promise.js';
import { effectiveScopes } from '../../policy/scopes.js';
import { extractBearerToken, hasAccessTokenInQuery } from '../bearer-token.js';
import { singleHeader, type RequestFacts } from '../facts.js';
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
 * by the route's verifier. 400 invalid_request for a token elsewhere or a malformed header, 401 without a token or
 * with an invalid one, 503 when the gateway cannot decide. At once for a token verified before, else a promise;
 * throws or rejects with the refusal.
 */
export function authenticate(state: DecisionState): MaybePromise<void> {
  const { facts } = state;
  const entry = matchedEntry(state);
  if (carriesTokenOutsideHeader(facts)) throw new GatewayError('invalid_request', { reason: 'token_outside_header' });
  const extraction = extractBearerToken(facts.rawHeaders, state.runtime.config.limits.maxTokenBytes, facts.connection);
  switch (extraction.kind) {
    case 'missing':
      throw new GatewayError('missing_token');
    case 'invalid_request':
      throw new GatewayError('invalid_request', { reason: 'malformed_authorization_header' });
    case 'too_long':
      throw new GatewayError('invalid_token', { reason: 'token_too_long' });
    case 'token': {
      const { token } = extraction;
      return andThen(entry.verifier.verify(token, { clientAddress: facts.clientAddress, connection: facts.connection }), (auth) => {
        state.auth = auth;
        state.scopes = effectiveScopes(auth.scopes, entry.route.policy.implies);
        keepCallerToken(state, token);
      });
    }
  }
}
