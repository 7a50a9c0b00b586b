import { CookieJar } from '../../examples/demo/headless-authorization.js';

/** Redirects followed before giving up: the development server needs about five, including the loopback redirect. */
const MAX_HOPS = 12;

/**
 * Plays the user's browser for one authorization URL: follows every redirect, keeping cookies, until a page
 * answers (the client's loopback redirect page when the server approves without asking, as the development server
 * does with --auto-approve and the conformance suite's servers always do). Resolves with that page's status.
 */
export async function visitInBrowser(url: URL): Promise<number> {
  const jar = new CookieJar();
  let next = url;
  for (let hop = 0; hop < MAX_HOPS; hop += 1) {
    const response = await fetch(next, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(response);
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null) return response.status;
    next = new URL(location, next);
  }
  throw new Error(`still redirecting after ${MAX_HOPS} hops`);
}
