import { B64TOKEN } from '../decision/index.js';

/**
 * Why `token` cannot be sent as a bearer token, in words that never quote it; undefined when it can. Checked
 * before any request: fetch rejects such a header with an error that quotes the whole value.
 */
export function bearerTokenProblem(token: string): string | undefined {
  if (B64TOKEN.test(token)) return undefined;
  if (token === '') return 'it is empty';
  if (/[\r\n]/.test(token)) return 'it spans more than one line';
  if (/\s/.test(token)) return 'it contains whitespace';
  return 'it has a character outside RFC 6750 b64token syntax (letters, digits, -._~+/ and a trailing =)';
}
