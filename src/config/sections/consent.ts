import { z } from 'zod';
import type { Milliseconds } from '../duration.js';
import { duration, strictUrl } from '../fields.js';
import type { ValueAt } from '../problem.js';
import { authorizationCodeClientKeys, compileAuthorizationCodeClient, type AuthorizationCodeClient } from './oauth-clients.js';
import type { RawRoute } from './routes/route.js';
import { callerIssuer } from './routes/tokens.js';

/**
 * `consent`: the gateway's consent pages (under /consent/) for user_oauth routes. Who opens a consent link signs in
 * first, and must be the caller the link was made for; cross-section.ts checks that the routes and this section
 * agree on where that sign-in happens.
 */

export const consentSchema = z
  .strictObject({
    login: z
      .strictObject({
        issuer: strictUrl(
          "Where the person at the browser signs in (OpenID Connect). Default: the user_oauth routes' tokens.jwt.issuer.",
        ).optional(),
        ...authorizationCodeClientKeys,
      })
      .describe("The gateway's OpenID Connect client at its own authorization server."),
    link_ttl: duration('10m', 'Lifetime of a consent link (single use).', { min: 30_000, max: 600_000 }),
  })
  .optional()
  .describe(
    'The gateway\'s consent pages (under /consent/) for upstream.auth.type user_oauth: who opens a consent link must sign in as the caller it was made for.',
  );

type RawConsent = z.output<typeof consentSchema>;

/** The gateway's consent pages (user_oauth): who opens a consent link signs in at `login.issuer` first. */
export interface ConsentSettings {
  /** The gateway's OpenID Connect client; its issuer is the one the user_oauth routes' callers come from. */
  readonly login: AuthorizationCodeClient;
  /** Lifetime of a consent link (at most 10 minutes). */
  readonly linkTtl: Milliseconds;
}

/** The routes whose upstream credential is each user's own grant, with their index. */
export function userOAuthRoutes(routes: readonly RawRoute[]): [RawRoute, number][] {
  return routes.flatMap((route, index): [RawRoute, number][] => (route.upstream.auth.type === 'user_oauth' ? [[route, index]] : []));
}

/**
 * Where the person at a consent link signs in: `consent.login.issuer`, else the one issuer the user_oauth routes'
 * callers come from. Their signed-in `iss` must be the caller's `iss` for a link ever to be accepted.
 */
export function consentLoginIssuer(consent: RawConsent, routes: readonly RawRoute[]): string | undefined {
  return consent?.login.issuer ?? userOAuthRoutes(routes).map(([route]) => callerIssuer(route.tokens)).find((issuer) => issuer !== undefined);
}

export function compileConsent(consent: RawConsent, routes: readonly RawRoute[]): ConsentSettings | undefined {
  const issuer = consentLoginIssuer(consent, routes);
  if (consent === undefined || issuer === undefined) return undefined;
  return { login: compileAuthorizationCodeClient(issuer, consent.login), linkTtl: consent.link_ttl };
}

/** The URL this section fetches, for the https rule. */
export function consentUrls(consent: RawConsent): ValueAt[] {
  return [['consent.login.issuer', consent?.login.issuer]];
}

/** The secret this section holds, for the literal-secret warning. */
export function consentSecrets(consent: RawConsent): ValueAt[] {
  return [['consent.login.client_secret', consent?.login.client_secret]];
}
