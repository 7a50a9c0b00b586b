/** What a user agent brings back to the client's redirect URI. Never logged: `code` is a credential. */
export interface AuthorizationResponse {
  readonly code: string;
  readonly state: string | undefined;
  /** The issuer the authorization server named (RFC 9207), for clients that check it themselves. */
  readonly iss: string | undefined;
}

/** Redirects followed before giving up: the dev server needs about four (auth → interaction → auth → callback). */
const MAX_HOPS = 12;

/** The cookies of one authorization, so the server's interaction steps recognise the same user agent. */
export class CookieJar {
  readonly #cookies = new Map<string, string>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';', 1)[0] ?? '';
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

function isRedirectUri(location: URL, redirectUri: URL): boolean {
  return location.origin === redirectUri.origin && location.pathname === redirectUri.pathname;
}

/** The authorization response carried by the final redirect; an error response names only its error code. */
function readAuthorizationResponse(location: URL): AuthorizationResponse {
  const { searchParams } = location;
  const error = searchParams.get('error');
  if (error !== null) throw new Error(`authorization refused: ${error}`);
  const code = searchParams.get('code');
  if (code === null || code === '') throw new Error('authorization response carries no code');
  return { code, state: searchParams.get('state') ?? undefined, iss: searchParams.get('iss') ?? undefined };
}

/**
 * Plays the user agent for one authorization request: follows the authorization server's redirects (keeping its
 * cookies) until it redirects to `redirectUri`, and reads the authorization response from that Location header,
 * so nothing needs to listen on the redirect URI. Works only where the server approves without a page (the
 * development server's auto-approve mode); a page, a redirect to any other origin, or an error response fails.
 */
export async function authorizeHeadlessly(
  authorizationUrl: URL,
  redirectUri: URL,
  fetchFn: typeof fetch = fetch,
): Promise<AuthorizationResponse> {
  const jar = new CookieJar();
  let url = authorizationUrl;
  for (let hop = 0; hop < MAX_HOPS; hop += 1) {
    const response = await fetchFn(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(response);
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null) {
      throw new Error(
        `the authorization server answered HTTP ${response.status} at ${url.pathname} instead of redirecting ` +
          '(is it running with --auto-approve?)',
      );
    }
    const next = new URL(location, url);
    if (isRedirectUri(next, redirectUri)) return readAuthorizationResponse(next);
    if (next.origin !== authorizationUrl.origin) {
      throw new Error(`the authorization server redirected to another origin (${next.origin})`);
    }
    url = next;
  }
  throw new Error(`no authorization response after ${MAX_HOPS} redirects`);
}
