import { z } from 'zod';
import type { Milliseconds } from '../../duration.js';
import { duration, rule } from '../../fields.js';
import { headerNameProblem } from '../../rules.js';

/**
 * `routes[].upstream.identity`: a short-lived JWT about the caller the gateway signs (with the top-level
 * `signing_key`) and sends upstream, so the upstream knows who calls without seeing the caller's token.
 */

export const identitySchema = z
  .strictObject({
    header: z
      .string()
      .superRefine(rule(headerNameProblem))
      .describe('Request header carrying the assertion, e.g. X-Gateway-Identity. A client-sent copy is never forwarded.'),
    ttl: duration('60s', 'Lifetime of one assertion (never beyond the caller token).', { min: 1_000, max: 3_600_000 }),
    audience: z
      .string()
      .min(1)
      .optional()
      .describe('`aud` of the assertion. Default: the origin of upstream.url.'),
  })
  .describe(
    "A short-lived ES256 JWT about the caller (sub, client_id, scope), signed with signing_key and published at /.well-known/jwks.json, so the upstream knows who calls without seeing the caller's token.",
  );

export type RawIdentity = z.output<typeof identitySchema>;

/** A gateway-signed JWT about the caller, sent upstream in `header`. */
export interface IdentitySettings {
  /** Lowercase header name. */
  readonly header: string;
  readonly ttl: Milliseconds;
  /** `aud` of the assertion: configured, else the upstream URL's origin. */
  readonly audience: string;
}

export function compileIdentity(raw: RawIdentity, upstreamUrl: URL): IdentitySettings {
  return {
    header: raw.header.toLowerCase(),
    ttl: raw.ttl,
    audience: raw.audience ?? upstreamUrl.origin,
  };
}
