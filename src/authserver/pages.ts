import { escapeHtml } from '../lib/html.js';

/**
 * Security headers for every page: nothing loads from anywhere, the page cannot be framed (clickjacking a consent),
 * nothing reaches other origins through Referer. `same-origin`, not `no-referrer`: under `no-referrer` browsers
 * post the page's own forms with `Origin: null`, which the interaction handler refuses as cross-origin.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

const DEV_BANNER = '<p class="dev">Development authorization server. Never use it for real accounts.</p>';

/** `banner`: the development server's warning on its pages; the gateway's own pages have none. */
function page(title: string, body: string, banner = DEV_BANNER): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem}.dev{background:#fff3cd;padding:.5rem}.warn{color:#8a1c1c}form{display:inline}button{font-size:1rem;margin:.5rem .5rem 0 0}</style>
</head>
<body>${banner}
${body}
</body>
</html>`;
}

function postButton(action: string, label: string): string {
  return `<form method="post" action="${escapeHtml(action)}"><button type="submit">${escapeHtml(label)}</button></form>`;
}

export function renderLoginPage(uid: string, accountId: string): string {
  return page(
    'Sign in',
    `<h1>Sign in</h1>
${postButton(`/interaction/${encodeURIComponent(uid)}/login`, `Sign in as ${accountId}`)}
${postButton(`/interaction/${encodeURIComponent(uid)}/abort`, 'Cancel')}`,
  );
}

export interface ConsentView {
  readonly uid: string;
  readonly clientName: string;
  readonly clientId: string;
  /** Host of the redirect URI the code will be sent to: the spec requires showing it. */
  readonly redirectHost: string;
  /** Loopback redirect URIs can be claimed by any local program, so the page says so. */
  readonly redirectIsLoopback: boolean;
  readonly resources: readonly string[];
  readonly scopes: readonly string[];
}

function list(items: readonly string[]): string {
  if (items.length === 0) return '<p>(none)</p>';
  return `<ul>${items.map((item) => `<li><code>${escapeHtml(item)}</code></li>`).join('')}</ul>`;
}

export function renderConsentPage(view: ConsentView): string {
  const base = `/interaction/${encodeURIComponent(view.uid)}`;
  const loopbackWarning = view.redirectIsLoopback
    ? '<p class="warn">This client redirects to your own machine. Any local program can claim such an address: approve only if you started this client.</p>'
    : '';
  return page(
    'Authorize access',
    `<h1>Authorize ${escapeHtml(view.clientName)}</h1>
<p>Client ID: <code>${escapeHtml(view.clientId)}</code></p>
<p>After approval you will be sent to <strong>${escapeHtml(view.redirectHost)}</strong>.</p>
${loopbackWarning}
<h2>Resources</h2>
${list(view.resources)}
<h2>Scopes</h2>
${list(view.scopes)}
${postButton(`${base}/confirm`, 'Approve')}
${postButton(`${base}/abort`, 'Deny')}`,
  );
}

export function renderErrorPage(error: string, description: string | undefined, banner = DEV_BANNER): string {
  const detail = description === undefined ? '' : `<p>${escapeHtml(description)}</p>`;
  return page('Error', `<h1>Error</h1>\n<p><code>${escapeHtml(error)}</code></p>\n${detail}`, banner);
}

/** The gateway's consent page: who asks, where the answer goes, for which MCP server, which scopes. */
export interface GatewayConsentView {
  /** Where the Allow and Deny forms post: `<action>/confirm`, `<action>/abort`. */
  readonly action: string;
  readonly clientName: string;
  readonly clientId: string;
  /** Host of the redirect URI the code will be sent to: the spec requires showing it. */
  readonly redirectHost: string;
  readonly redirectIsLoopback: boolean;
  /** The MCP servers (routes) asked for, by name. */
  readonly servers: readonly string[];
  /** Asked for and entitled: what the first token carries. */
  readonly scopes: readonly string[];
  /** Entitled, not asked for now: what the client may get later by refreshing (step-up). */
  readonly laterScopes: readonly string[];
  /** Asked for, not entitled: never granted. */
  readonly refusedScopes: readonly string[];
}

export function renderGatewayConsentPage(view: GatewayConsentView): string {
  const loopbackWarning = view.redirectIsLoopback
    ? '<p class="warn">This client redirects to your own machine. Any local program can claim such an address: allow only if you started this client.</p>'
    : '';
  const later =
    view.laterScopes.length === 0 ? '' : `<h2>It may later ask for</h2>\n<p>without asking you again:</p>\n${list(view.laterScopes)}`;
  const refused =
    view.refusedScopes.length === 0 ? '' : `<h2>Not granted (you are not entitled)</h2>\n${list(view.refusedScopes)}`;
  return page(
    'Allow access',
    `<h1>Allow ${escapeHtml(view.clientName)} to use ${escapeHtml(view.servers.join(', '))}?</h1>
<p>Client ID: <code>${escapeHtml(view.clientId)}</code></p>
<p>After your answer you will be sent to <strong>${escapeHtml(view.redirectHost)}</strong>.</p>
${loopbackWarning}
<h2>Scopes</h2>
${list(view.scopes)}
${later}
${refused}
${postButton(`${view.action}/confirm`, 'Allow')}
${postButton(`${view.action}/abort`, 'Deny')}`,
    '',
  );
}
