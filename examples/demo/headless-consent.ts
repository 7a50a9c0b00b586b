import { CookieJar } from './headless-authorization.js';

/** How a consent link ended, as the last page said. */
export interface ConsentResult {
  /** HTTP status of the last page. */
  readonly status: number;
  /** Its `<h1>`: "Connected", "Not connected", "Wrong account", ... */
  readonly heading: string;
  readonly html: string;
  /** Every URL visited, in order (query strings removed: they carry codes and links). */
  readonly visited: readonly string[];
}

export interface HeadlessConsentOptions {
  /** What to answer on the gateway's consent page. */
  readonly decision: 'allow' | 'deny';
  readonly fetch?: typeof fetch;
  /** Told each page or redirect on the way (URL without query). */
  readonly onStep?: (step: { readonly url: string; readonly status: number }) => void;
}

/** The gateway's own pages and two sign-ins, each a few redirects: far below this. */
const MAX_HOPS = 24;

function decodeHtml(value: string): string {
  return value.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The consent form of the gateway's page: where it posts and its CSRF token. */
function consentForm(html: string): { action: string; csrf: string } | undefined {
  const action = /<form method="post" action="([^"]+\/consent\/decide)">/.exec(html)?.[1];
  const csrf = /<input type="hidden" name="csrf" value="([^"]+)">/.exec(html)?.[1];
  return action === undefined || csrf === undefined ? undefined : { action: decodeHtml(action), csrf: decodeHtml(csrf) };
}

const withoutQuery = (url: URL) => `${url.origin}${url.pathname}`;

type WalkOptions = Omit<HeadlessConsentOptions, 'fetch'> & { readonly stopBefore?: (next: URL) => boolean };

/** A page the browser showed: where it came from, the Referrer-Policy it was served with, its HTML. */
export interface ShownPage {
  readonly url: URL;
  readonly referrerPolicy: string | null;
  readonly html: string;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * The `Origin` a browser sends with a form POST from `page` to `target` (Fetch, "serializing a request origin"):
 * the page's origin, or `null` when the page's referrer policy hides it from that target. Sending what browsers
 * send, never a made-up Origin, is what lets tests see the consent forms as browsers do.
 */
function formOrigin(page: ShownPage, target: URL): string {
  // Of a comma-separated list the last (known) policy applies; none: the browsers' default.
  const policy = page.referrerPolicy?.split(',').at(-1)?.trim().toLowerCase() || 'strict-origin-when-cross-origin';
  const downgrade = page.url.protocol === 'https:' && target.protocol !== 'https:' && !LOOPBACK.test(target.hostname);
  switch (policy) {
    case 'no-referrer':
      return 'null';
    case 'same-origin':
      return page.url.origin === target.origin ? page.url.origin : 'null';
    case 'no-referrer-when-downgrade':
    case 'strict-origin':
    case 'strict-origin-when-cross-origin':
      return downgrade ? 'null' : page.url.origin;
    default:
      return page.url.origin;
  }
}

function formPost(page: ShownPage, action: URL, fields: Readonly<Record<string, string>>): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: formOrigin(page, action) },
    body: new URLSearchParams(fields).toString(),
  };
}

/** Where a walk stopped: a final page, or (with `stopBefore`) the next request it did not make. */
export type ConsentWalk = ({ readonly kind: 'page' } & ConsentResult) | { readonly kind: 'stopped'; readonly next: URL };

/**
 * A user's browser for consent links, headless: follows redirects across the gateway and the authorization
 * servers (auto-approving development servers), keeping cookies per host as browsers do, and answers the gateway's
 * consent form. Tests use `stopBefore` to intercept a redirect (a callback with its code) and `resume` to go on.
 */
export class ConsentBrowser {
  readonly #fetch: typeof fetch;
  readonly #jars = new Map<string, CookieJar>();
  /** The last page shown (not a redirect): the one whose forms `submit` sends. */
  #page: ShownPage | undefined;

  get page(): ShownPage | undefined {
    return this.#page;
  }

  constructor(fetchFn: typeof fetch = fetch) {
    this.#fetch = fetchFn;
  }

  #jar(url: URL): CookieJar {
    let jar = this.#jars.get(url.hostname);
    if (!jar) {
      jar = new CookieJar();
      this.#jars.set(url.hostname, jar);
    }
    return jar;
  }

  /** Submits a form of the last page shown (with the Origin a browser would send), then walks on from the answer. */
  submit(action: URL, fields: Readonly<Record<string, string>>, options: WalkOptions): Promise<ConsentWalk> {
    if (!this.#page) throw new Error('no page shown yet: nothing to submit a form from');
    return this.walk(action, options, formPost(this.#page, action, fields));
  }

  /** Walks from `url` until a page other than the consent form, or until `stopBefore` says no. */
  async walk(url: URL, options: WalkOptions, init: RequestInit = {}): Promise<ConsentWalk> {
    const visited: string[] = [];
    let request: { url: URL; init: RequestInit } = { url, init };
    for (let hop = 0; hop < MAX_HOPS; hop += 1) {
      if (hop > 0 && options.stopBefore?.(request.url)) return { kind: 'stopped', next: request.url };
      const jar = this.#jar(request.url);
      const headers = { ...(request.init.headers as Record<string, string> | undefined), cookie: jar.header() };
      const response = await this.#fetch(request.url, { ...request.init, redirect: 'manual', headers });
      jar.store(response);
      visited.push(withoutQuery(request.url));
      options.onStep?.({ url: withoutQuery(request.url), status: response.status });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel();
        request = { url: new URL(location, request.url), init: {} };
        continue;
      }
      const html = await response.text();
      this.#page = { url: request.url, referrerPolicy: response.headers.get('referrer-policy'), html };
      const form = response.status === 200 ? consentForm(html) : undefined;
      if (!form) return { kind: 'page', status: response.status, heading: decodeHtml(/<h1>([^<]*)<\/h1>/.exec(html)?.[1] ?? ''), html, visited };
      const action = new URL(form.action, request.url);
      request = { url: action, init: formPost(this.#page, action, { csrf: form.csrf, decision: options.decision }) };
    }
    throw new Error(`the consent link did not end after ${MAX_HOPS} steps`);
  }
}

/** Opens a consent link in a fresh headless browser and walks it to its last page. */
export async function completeConsentHeadlessly(link: URL, options: HeadlessConsentOptions): Promise<ConsentResult> {
  const walk = await new ConsentBrowser(options.fetch).walk(link, options);
  if (walk.kind !== 'page') throw new Error('the consent walk stopped early');
  return walk;
}
