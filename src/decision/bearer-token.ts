import { perConnection } from '../lib/memo.js';

/** The authentication schemes an access token may come in: RFC 6750 `Bearer` and RFC 9449 §7.1 `DPoP`. */
export type TokenScheme = 'bearer' | 'dpop';

export type TokenExtraction =
  | { readonly kind: 'token'; readonly token: string; readonly scheme: TokenScheme }
  | { readonly kind: 'missing' }
  | { readonly kind: 'invalid_request' }
  | { readonly kind: 'too_long' };

/** RFC 6750 §2.1 b64token (token68): base64/base64url alphabet plus `-._~+/`, trailing `=` padding only. */
export const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * What the header grammar requires of the credential: b64token's characters, `=` included, in one run. Where the
 * `=` stand is the form of the token itself, so padding inside (`=` in the middle of a JWT segment) makes a
 * malformed access token, `invalid_token` (RFC 6750 §3.1), which the verifiers decide (both refuse anything that is
 * not a b64token); spaces, commas, quotes and any other character make a malformed request.
 */
const CREDENTIAL = /^[A-Za-z0-9\-._~+/=]+$/;

/** Scheme, separator and the rest; the classes are disjoint so the match is linear. */
const CREDENTIALS = /^([^ \t]*)([ \t]*)(.*)$/s;

/**
 * Finds the access token in Node's `req.rawHeaders` (`[name, value, ...]`): `req.headers` silently keeps only the
 * first `authorization` line, which would hide a duplicate.
 *
 * - no Authorization line, or a scheme other than Bearer or DPoP → `missing` (401 without `error`, RFC 6750 §3.1)
 * - more than one Authorization line, or a credential that is not `<scheme> 1*SP` one run of b64token
 *   characters → `invalid_request` (see CREDENTIAL for where `=` is judged)
 * - a token longer than `maxTokenBytes` → `too_long`, checked before the grammar so a huge value is never scanned
 *
 * Leading/trailing SP and HTAB around the field value are optional whitespace (RFC 9110 §5.5) and ignored; Node's
 * parser strips them already. Inside the value only spaces may separate scheme and token. With `connection`, the
 * reading of the value that connection sent last is reused when it sends exactly the same value (`perConnection`).
 * Whether the route takes the scheme found is the token step's question.
 */
export function extractAccessToken(rawHeaders: readonly string[], maxTokenBytes: number, connection?: object): TokenExtraction {
  let value: string | undefined;
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = rawHeaders[index] as string;
    // The length first: most names differ in it, and lowercasing a capitalised name makes a new string.
    if (name.length !== AUTHORIZATION.length || name.toLowerCase() !== AUTHORIZATION) continue;
    if (value !== undefined) return { kind: 'invalid_request' };
    value = rawHeaders[index + 1];
  }
  if (value === undefined) return { kind: 'missing' };
  // A value no longer than the limit cannot hold a token over it, so its reading does not depend on the limit.
  return value.length <= maxTokenBytes ? credentialOf(value, connection) : tokenCredential(value, maxTokenBytes);
}

const AUTHORIZATION = 'authorization';

/** One Authorization value read as an access token credential (see extractAccessToken). */
function tokenCredential(value: string, maxTokenBytes: number): TokenExtraction {
  const [, schemeName = '', separator = '', token = ''] = CREDENTIALS.exec(trimOws(value)) ?? [];
  const scheme = schemeName.toLowerCase();
  if (scheme !== 'bearer' && scheme !== 'dpop') return { kind: 'missing' };
  if (separator.includes('\t') || token === '') return { kind: 'invalid_request' };
  // Characters outside the grammar fail below anyway, so characters ≥ bytes here for every token that can pass.
  if (token.length > maxTokenBytes) return { kind: 'too_long' };
  if (!CREDENTIAL.test(token)) return { kind: 'invalid_request' };
  return { kind: 'token', token, scheme };
}

/** The grammar check of a 600-character JWT costs ~0.5 µs; a kept-alive client sends the same value every time. */
const credentialOf = perConnection((value) => tokenCredential(value, Number.POSITIVE_INFINITY));

/** True when the request target's query has an `access_token` parameter (name compared case-insensitively). */
export function hasAccessTokenInQuery(url: string): boolean {
  const start = url.indexOf('?');
  if (start === -1) return false;
  const end = url.indexOf('#', start);
  const query = url.slice(start + 1, end === -1 ? undefined : end);
  for (const name of new URLSearchParams(query).keys()) {
    if (name.toLowerCase() === 'access_token') return true;
  }
  return false;
}

/** A loop, not a regex: `/[ \t]+$/` backtracks quadratically on long runs of inner whitespace. */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start += 1;
  while (end > start && isOws(value.charCodeAt(end - 1))) end -= 1;
  return value.slice(start, end);
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
