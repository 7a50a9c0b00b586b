import { privateKey } from '../fields.js';

/**
 * `signing_key`: the private key signing identity assertions (routes[].upstream.identity); its public half is served at
 * /.well-known/jwks.json.
 */

export const signingKeySchema = privateKey(
  'EC P-256 key signing identity assertions (upstream.identity). Default: a key generated per process (one warning).',
  'ES256',
).optional();
