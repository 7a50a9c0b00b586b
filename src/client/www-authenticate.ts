/**
 * RFC 9110 §11.6.1 `WWW-Authenticate` parser: a comma-separated list of challenges, each an auth-scheme followed by
 * either a token68 or a comma-separated list of auth-params whose values are tokens or quoted-strings (with
 * backslash escapes, and commas allowed inside). Several header lines joined with ", " (as fetch's `Headers.get`
 * does) parse as one list.
 */

export interface Challenge {
  /** As sent; compare case-insensitively (RFC 9110 §11.1). */
  readonly scheme: string;
  /** The challenge's token68 form, when it has one instead of auth-params. */
  readonly token68?: string;
  /** Auth-params by lowercase name (RFC 9110 §11.2: names are case-insensitive); the first value of a repeated name. */
  readonly params: ReadonlyMap<string, string>;
  /** Names that occurred more than once (RFC 9110 §11.2: each MUST occur only once per challenge). */
  readonly duplicateParams: readonly string[];
}

export type ChallengeParse =
  | { readonly ok: true; readonly challenges: readonly Challenge[] }
  | { readonly ok: false; readonly error: string };

/** RFC 9110 §5.6.2 tchar. */
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
/** RFC 9110 §11.2 token68 characters before the trailing "=" padding. */
const TOKEN68_CHAR = /[A-Za-z0-9\-._~+/]/;
/** qdtext and the characters a quoted-pair may escape: HTAB, SP, VCHAR, obs-text (no other control characters). */
const QUOTABLE_CHAR = /[\t\x20-\x7E\x80-\xFF]/;

class ParseError extends Error {}

/** A cursor over the header value; every read either advances past what it returns or leaves the position alone. */
class Cursor {
  position = 0;
  constructor(readonly input: string) {}

  get done(): boolean {
    return this.position >= this.input.length;
  }

  peek(): string {
    return this.input.charAt(this.position);
  }

  fail(what: string): never {
    throw new ParseError(`${what} at character ${this.position + 1}`);
  }

  /** OWS / BWS: optional spaces and horizontal tabs. */
  skipWhitespace(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.position += 1;
  }

  readWhile(pattern: RegExp): string {
    const start = this.position;
    while (!this.done && pattern.test(this.peek())) this.position += 1;
    return this.input.slice(start, this.position);
  }

  readQuotedString(): string {
    this.position += 1; // the opening DQUOTE
    let value = '';
    for (;;) {
      if (this.done) this.fail('unterminated quoted-string');
      const char = this.peek();
      this.position += 1;
      if (char === '"') return value;
      if (char === '\\') {
        if (this.done || !QUOTABLE_CHAR.test(this.peek())) this.fail('invalid escape in quoted-string');
        value += this.peek();
        this.position += 1;
      } else if (QUOTABLE_CHAR.test(char)) {
        value += char;
      } else {
        this.position -= 1;
        this.fail('control character in quoted-string');
      }
    }
  }
}

/** At the end of the value, or at the comma that ends this list element (after optional whitespace). */
function atElementEnd(cursor: Cursor): boolean {
  cursor.skipWhitespace();
  return cursor.done || cursor.peek() === ',';
}

/** `token BWS "=" BWS ( token / quoted-string )` at the cursor, or undefined (position unchanged) when it is not one. */
function readAuthParam(cursor: Cursor): readonly [string, string] | undefined {
  const start = cursor.position;
  const name = cursor.readWhile(TCHAR);
  cursor.skipWhitespace();
  if (name === '' || cursor.peek() !== '=') {
    cursor.position = start;
    return undefined;
  }
  cursor.position += 1;
  cursor.skipWhitespace();
  const quoted = cursor.peek() === '"';
  const value = quoted ? cursor.readQuotedString() : cursor.readWhile(TCHAR);
  // `abc=` or `abc==` with nothing after the "=" is a token68 with its padding, not a parameter.
  if (!quoted && value === '') {
    cursor.position = start;
    return undefined;
  }
  return [name.toLowerCase(), value];
}

function readToken68(cursor: Cursor): string | undefined {
  const start = cursor.position;
  const body = cursor.readWhile(TOKEN68_CHAR);
  const padding = cursor.readWhile(/=/);
  if (body === '' || !atElementEnd(cursor)) {
    cursor.position = start;
    return undefined;
  }
  return body + padding;
}

/** Skips the commas and whitespace between list elements, including empty elements (RFC 9110 §5.6.1). */
function skipListSeparators(cursor: Cursor): void {
  for (;;) {
    cursor.skipWhitespace();
    if (cursor.peek() !== ',') return;
    cursor.position += 1;
  }
}

function readChallenge(cursor: Cursor): Challenge {
  const scheme = cursor.readWhile(TCHAR);
  if (scheme === '') cursor.fail('expected an auth-scheme');
  const params = new Map<string, string>();
  const duplicates = new Set<string>();
  const challenge = (token68?: string): Challenge => ({
    scheme,
    ...(token68 === undefined ? {} : { token68 }),
    params,
    duplicateParams: [...duplicates],
  });

  const afterScheme = cursor.position;
  if (atElementEnd(cursor)) return challenge();
  if (cursor.position === afterScheme) cursor.fail('expected a space after the auth-scheme');
  let param = readAuthParam(cursor);
  if (param === undefined) {
    const token68 = readToken68(cursor);
    if (token68 === undefined) cursor.fail('expected a token68 or an auth-param (name=value)');
    return challenge(token68);
  }
  // auth-params until the next list element is not one: that element starts the next challenge.
  for (;;) {
    const [name, value] = param;
    if (params.has(name)) duplicates.add(name);
    else params.set(name, value);
    if (!atElementEnd(cursor)) cursor.fail('expected "," after an auth-param');
    skipListSeparators(cursor);
    if (cursor.done) return challenge();
    const next = readAuthParam(cursor);
    if (next === undefined) return challenge();
    param = next;
  }
}

/** Parses a whole `WWW-Authenticate` value; a syntax error names the first offending character's position. */
export function parseWwwAuthenticate(value: string): ChallengeParse {
  const cursor = new Cursor(value);
  const challenges: Challenge[] = [];
  try {
    skipListSeparators(cursor);
    while (!cursor.done) {
      challenges.push(readChallenge(cursor));
      skipListSeparators(cursor);
    }
  } catch (error) {
    if (error instanceof ParseError) return { ok: false, error: error.message };
    throw error;
  }
  if (challenges.length === 0) return { ok: false, error: 'no challenge in the header' };
  return { ok: true, challenges };
}

/** The first `Bearer` challenge (RFC 6750 §3), scheme compared case-insensitively. */
export function bearerChallenge(challenges: readonly Challenge[]): Challenge | undefined {
  return challenges.find((challenge) => challenge.scheme.toLowerCase() === 'bearer');
}
