import { escapeHtml } from '../lib/html.js';

/** A page answer: status, body, and the origins its forms may be sent to (besides its own). */
export interface Page {
  readonly status: number;
  readonly html: string;
  /** Origins a form on this page leads to (the consent form redirects to the upstream's authorization server). */
  readonly formTargets?: readonly string[];
}

/**
 * Security headers of every consent page: nothing loads, nothing frames it, nothing leaks through Referer to other
 * origins. `same-origin`, not `no-referrer`: under `no-referrer` browsers send `Origin: null` with the page's own
 * forms (Fetch, serializing a request origin), which hides that they came from the gateway's pages. Redirects to
 * the authorization servers carry `no-referrer` themselves (plugin.ts).
 */
export function pageHeaders(page: Page): Record<string, string> {
  const formAction = ["'self'", ...(page.formTargets ?? [])].join(' ');
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
  };
}

function document(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;line-height:1.4}dt{font-weight:600;margin-top:.6rem}dd{margin:0}code{word-break:break-all}form{display:inline}button{font-size:1rem;margin:1rem .5rem 0 0}</style>
</head>
<body>
${body}
</body>
</html>`;
}

function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;
}

function button(name: string, value: string, label: string): string {
  return `<button type="submit" name="${escapeHtml(name)}" value="${escapeHtml(value)}">${escapeHtml(label)}</button>`;
}

function scopeList(scopes: readonly string[]): string {
  return scopes.length === 0 ? '(none requested)' : scopes.map((scope) => `<code>${escapeHtml(scope)}</code>`).join(' ');
}

export interface ConsentView {
  /** Route display name (resource_name, else route name). */
  readonly name: string;
  /** The MCP server the grant is for, as clients know it: the route's resource identifier (never its upstream URL). */
  readonly resource: string;
  /** Issuer of the upstream's authorization server. */
  readonly vendor: string;
  readonly scopes: readonly string[];
  /** The MCP client whose request asked for this connection. */
  readonly clientId: string | undefined;
  /** Who signed in (the subject at the gateway's authorization server). */
  readonly user: string;
  readonly action: string;
  readonly csrf: string;
  /** Origin of the upstream authorization endpoint that Allow leads to. */
  readonly authorizationOrigin: string;
}

export function consentPage(view: ConsentView): Page {
  const html = document(
    'Connect your account',
    `<h1>Connect ${escapeHtml(view.name)}</h1>
<p>An MCP client asks the gateway to use <strong>${escapeHtml(view.name)}</strong> on your behalf, with your own account at its authorization server.</p>
<dl>
<dt>Signed in as</dt><dd><code>${escapeHtml(view.user)}</code></dd>
<dt>MCP client</dt><dd><code>${escapeHtml(view.clientId ?? '(unnamed)')}</code></dd>
<dt>MCP server</dt><dd><code>${escapeHtml(view.resource)}</code></dd>
<dt>Authorization server</dt><dd><code>${escapeHtml(view.vendor)}</code></dd>
<dt>Access requested</dt><dd>${scopeList(view.scopes)}</dd>
</dl>
<p>Allow only if you started this from your own MCP client just now. You can disconnect at any time.</p>
<form method="post" action="${escapeHtml(view.action)}">${hidden('csrf', view.csrf)}${button('decision', 'allow', 'Allow')}${button('decision', 'deny', 'Deny')}</form>`,
  );
  return { status: 200, html, formTargets: [view.authorizationOrigin] };
}

export function connectedPage(name: string): Page {
  return {
    status: 200,
    html: document('Connected', `<h1>Connected</h1><p>${escapeHtml(name)} is connected to your account. Return to your MCP client and try again.</p>`),
  };
}

export function notConnectedPage(name: string): Page {
  return {
    status: 200,
    html: document('Not connected', `<h1>Not connected</h1><p>${escapeHtml(name)} was not connected. You can close this page.</p>`),
  };
}

export interface GrantView {
  readonly route: string;
  readonly name: string;
  readonly vendor: string;
  readonly scopes: readonly string[];
  readonly since: string;
}

/** A route the user has not connected yet: what the Connect button would ask for. */
export interface WaitingView {
  readonly route: string;
  readonly name: string;
  readonly vendor: string;
  readonly scopes: readonly string[];
}

export interface GrantsPageView {
  readonly user: string;
  readonly grants: readonly GrantView[];
  readonly waiting: readonly WaitingView[];
  readonly revokeAction: string;
  readonly connectAction: string;
  readonly csrf: string;
}

function routeForm(action: string, csrf: string, route: string, value: string, label: string): string {
  return `<form method="post" action="${escapeHtml(action)}">${hidden('csrf', csrf)}${hidden('route', route)}${button('decision', value, label)}</form>`;
}

/** The user's connected accounts, each with Disconnect, and the routes still waiting for a connection, each with Connect. */
export function grantsPage(view: GrantsPageView): Page {
  const connected =
    view.grants.length === 0
      ? '<p>No connected accounts.</p>'
      : view.grants
          .map(
            (grant) => `<section><h2>${escapeHtml(grant.name)}</h2>
<dl><dt>Authorization server</dt><dd><code>${escapeHtml(grant.vendor)}</code></dd>
<dt>Access</dt><dd>${scopeList(grant.scopes)}</dd><dt>Connected since</dt><dd>${escapeHtml(grant.since)}</dd></dl>
${routeForm(view.revokeAction, view.csrf, grant.route, 'revoke', 'Disconnect')}</section>`,
          )
          .join('\n');
  const waiting =
    view.waiting.length === 0
      ? ''
      : `\n<h2>Waiting for a connection</h2>\n<p>These MCP servers need your own account at their service before your MCP client can use them.</p>\n${view.waiting
          .map(
            (route) => `<section><h3>${escapeHtml(route.name)}</h3>
<dl><dt>Authorization server</dt><dd><code>${escapeHtml(route.vendor)}</code></dd><dt>Access requested</dt><dd>${scopeList(route.scopes)}</dd></dl>
${routeForm(view.connectAction, view.csrf, route.route, 'connect', 'Connect')}</section>`,
          )
          .join('\n')}`;
  return {
    status: 200,
    html: document('Connected accounts', `<h1>Connected accounts</h1><p>Signed in as <code>${escapeHtml(view.user)}</code>.</p>\n${connected}${waiting}`),
  };
}

/** Why a consent page cannot go on. Each has one fixed text: nothing from the request or the servers is shown. */
export type ConsentFailure = 'expired' | 'wrong_account' | 'failed' | 'unavailable' | 'not_found';

const FAILURES: Readonly<Record<ConsentFailure, readonly [status: number, title: string, text: string]>> = {
  expired: [400, 'Link expired', 'This link has expired or was already used. Nothing was connected. Go back to your MCP client and try again: it will give you a new link.'],
  wrong_account: [403, 'Wrong account', 'You signed in with a different account than the one this link was made for. Nothing was connected.'],
  failed: [400, 'Not connected', 'The sign-in could not be completed. Nothing was connected. Go back to your MCP client and try again.'],
  unavailable: [503, 'Try again later', 'A service this step needs is not available right now. Nothing was connected. Try again in a few minutes.'],
  not_found: [404, 'Not found', 'There is nothing here.'],
};

export function failurePage(failure: ConsentFailure): Page {
  const [status, title, text] = FAILURES[failure];
  return { status, html: document(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`) };
}
