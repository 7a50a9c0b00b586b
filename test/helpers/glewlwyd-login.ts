import type { Page, Response } from 'playwright-core';
import type { Pages } from '../clients/browser.js';

/**
 * A person signing in at glewlwyd (test/helpers/glewlwyd.ts) in Debian's Chromium, through its real login page: a
 * JavaScript single-page app (login.html) that posts the password to `/api/auth/`, then shows its consent screen
 * ("Client access grant": `openid` ticked and locked, every other scope a checkbox), then "Continue" back to the
 * authorization endpoint, which redirects with the code.
 */

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

export type GlewlwydSignIn =
  /** The browser was sent to `url` (by default the authorization request's `redirect_uri`, with code and state). */
  | { readonly outcome: 'redirected'; readonly url: URL }
  /** The password was refused: the browser stays on the login page, which shows `message`. */
  | { readonly outcome: 'refused'; readonly message: string; readonly pageUrl: URL };

export interface SignInOptions {
  /** Where glewlwyd's redirect stops the walk (never followed, so its code is unspent); default: the `redirect_uri`. */
  readonly stopAt?: (url: URL) => boolean;
  /** Scopes left unticked on the consent screen (the person declines them); default: every scope is granted. */
  readonly decline?: readonly string[];
}

const STEP_TIMEOUT_MS = 15_000;

/**
 * Walks `authorizationUrl`, glewlwyd's own authorization request (`<issuer>/auth?...`, e.g. the `Location` a relying
 * party such as the gateway redirects to), in a fresh browser context (no glewlwyd session), as `credentials`.
 */
export async function signInAtGlewlwyd(
  pages: Pages,
  authorizationUrl: URL | string,
  credentials: Credentials,
  options: SignInOptions = {},
): Promise<GlewlwydSignIn> {
  const start = new URL(authorizationUrl);
  const stopAt = options.stopAt ?? redirectUriOf(start);
  const page = await pages.newPage();
  try {
    return await walk(page, start, stopAt, credentials, options.decline ?? []);
  } finally {
    await page.context().close();
  }
}

async function walk(page: Page, start: URL, stopAt: (url: URL) => boolean, credentials: Credentials, decline: readonly string[]): Promise<GlewlwydSignIn> {
  let arrived: (url: URL) => void = () => undefined;
  const redirected = new Promise<URL>((resolve) => (arrived = resolve));
  // Every redirect out of glewlwyd leaves from its authorization endpoint. Chromium follows a redirect of a request
  // that was not stopped without asking the route handlers again, so the endpoint's answers are fetched here and a
  // redirect to `stopAt` is never followed (the code stays unspent for the caller).
  await page.route(
    (url) => url.origin === start.origin && url.pathname === start.pathname,
    async (route) => {
      const response = await route.fetch({ maxRedirects: 0 });
      const location = response.headers().location;
      const target = location === undefined ? undefined : new URL(location, route.request().url());
      if (!target || !stopAt(target)) return route.fulfill({ response });
      arrived(target);
      return route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in at glewlwyd' });
    },
  );

  await page.goto(start.href);
  // A request glewlwyd refuses outright (no PKCE, say) is redirected back with an error, not to the login page.
  const loginForm = page.locator('#username').waitFor({ timeout: STEP_TIMEOUT_MS }).then(() => undefined);
  const early = await Promise.race([redirected, loginForm]);
  if (early) return { outcome: 'redirected', url: early };
  const turn = await signInOnLoginPage(page, credentials, decline);
  if (turn.outcome === 'refused') return turn;
  return { outcome: 'redirected', url: await withinStepTimeout(redirected, `a redirect leaving ${page.url()}`) };
}

/** How the person's turn on glewlwyd's login page ended. */
export type LoginPageTurn = { readonly outcome: 'continued' } | Extract<GlewlwydSignIn, { outcome: 'refused' }>;

/**
 * The person's turn on glewlwyd's login page, open in `page`: the password, the consent screen while a scope lacks a
 * grant, then "Continue" back to the authorization endpoint, whose redirect the caller awaits (e.g. a relying party
 * such as the gateway that glewlwyd sends the browser back to).
 */
export async function signInOnLoginPage(page: Page, credentials: Credentials, decline: readonly string[] = []): Promise<LoginPageTurn> {
  await page.locator('#username').fill(credentials.username);
  await page.locator('#password').fill(credentials.password);
  // The grants are asked for right after a successful password check: listen before clicking.
  const grants = page.waitForResponse(isGrantList, { timeout: STEP_TIMEOUT_MS });
  grants.catch(() => undefined);
  const [signedIn] = await Promise.all([page.waitForResponse(isPasswordSignIn, { timeout: STEP_TIMEOUT_MS }), page.locator('#loginbut').click()]);
  if (signedIn.status() === 401) {
    const message = page.getByText('Authentication error');
    await message.waitFor({ timeout: STEP_TIMEOUT_MS });
    return { outcome: 'refused', message: (await message.textContent()) ?? '', pageUrl: new URL(page.url()) };
  }
  if (signedIn.status() !== 200) throw new Error(`glewlwyd's login answered ${signedIn.status()}: ${await signedIn.text()}`);

  const { scope } = (await (await grants).json()) as GrantList;
  if (scope.some((entry) => !entry.granted)) await grantScopes(page, decline);
  await page.locator('button[title="Continue to client application"]').click({ timeout: STEP_TIMEOUT_MS });
  return { outcome: 'continued' };
}

/** Matches redirects to the authorization request's `redirect_uri` (any query: it carries code and state or error). */
function redirectUriOf(authorizationUrl: URL): (url: URL) => boolean {
  const redirectUri = authorizationUrl.searchParams.get('redirect_uri');
  if (!redirectUri) throw new Error(`no redirect_uri in ${authorizationUrl.href}`);
  const target = new URL(redirectUri);
  return (url) => url.origin === target.origin && url.pathname === target.pathname;
}

function isPasswordSignIn(response: Response): boolean {
  const request = response.request();
  return request.method() === 'POST' && new URL(request.url()).pathname === '/api/auth/';
}

/** `GET /api/auth/grant/<client_id>/<scopes>`: which asked-for scopes this person already granted this client. */
interface GrantList {
  readonly scope: readonly { readonly name: string; readonly granted: boolean }[];
}

function isGrantList(response: Response): boolean {
  return response.request().method() === 'GET' && new URL(response.url()).pathname.startsWith('/api/auth/grant/');
}

/**
 * The consent screen ("Client access grant") shows while the client lacks a grant for some asked-for scope; a grant
 * is remembered per person and client, so a later sign-in goes straight to "Continue".
 */
async function grantScopes(page: Page, decline: readonly string[]): Promise<void> {
  const grantButton = page.getByRole('button', { name: 'Grant access' });
  await grantButton.waitFor({ timeout: STEP_TIMEOUT_MS });
  for (const checkbox of await page.locator('input[type="checkbox"][id^="grant-"]').all()) {
    const scope = (await checkbox.getAttribute('id'))?.slice('grant-'.length) ?? '';
    if (!decline.includes(scope)) await checkbox.check();
  }
  await Promise.all([page.waitForResponse(isGrantUpdate, { timeout: STEP_TIMEOUT_MS }), grantButton.click()]);
  await grantButton.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT_MS });
}

function isGrantUpdate(response: Response): boolean {
  return response.request().method() === 'PUT' && response.ok() && new URL(response.url()).pathname.startsWith('/api/auth/grant/');
}

async function withinStepTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`never saw ${what}`)), STEP_TIMEOUT_MS)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
