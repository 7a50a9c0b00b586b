import { CONSENT_PATH_PREFIX } from '../config/rules.js';

/**
 * The consent pages' paths under the public URL (route paths under the prefix are refused by the config). The
 * two callbacks are the redirect URIs registered at the authorization servers, matched exactly there.
 */
export const CONSENT_PATHS = {
  connect: `${CONSENT_PATH_PREFIX}/connect`,
  loginCallback: `${CONSENT_PATH_PREFIX}/login/callback`,
  decide: `${CONSENT_PATH_PREFIX}/decide`,
  callback: `${CONSENT_PATH_PREFIX}/callback`,
  grants: `${CONSENT_PATH_PREFIX}/grants`,
  revoke: `${CONSENT_PATH_PREFIX}/grants/revoke`,
  /** A route still waiting for a connection, connected from the grants page. */
  connectRoute: `${CONSENT_PATH_PREFIX}/grants/connect`,
} as const;
