import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { packageVersion, type ClientDriver, type MatrixContext } from '../context.js';
import { otherRouteKinds } from './route-kinds.js';

const FLOW_TIMEOUT_MS = 30_000;

/**
 * The page's own MCP client, in plain browser JavaScript: everything a browser-based client does, from the
 * page's origin, so each step needs CORS from the gateway or the authorization server. 401 → the challenge read
 * from WWW-Authenticate (exposed) → protected resource metadata → authorization server metadata → registration
 * (DCR) → authorization (top-level navigation, PKCE S256, resource) → token → initialize (Mcp-Session-Id read back)
 * → tools/call with the mirrored Mcp-Method / Mcp-Name headers → the 403 step-up → authorization again → retry.
 * State survives the navigations in sessionStorage; the outcome ends up in the URL of /done.
 */
const PAGE_SCRIPT = String.raw`
const MCP = new URL(document.documentElement.dataset.mcp);
// Another route kind: one call of this tool, its first text in the outcome (absent: add, then multiply).
const TOOL = document.documentElement.dataset.tool;
const ARGS = JSON.parse(document.documentElement.dataset.args ?? '{}');
const state = JSON.parse(sessionStorage.getItem('matrix') ?? '{"id":0}');
const save = () => sessionStorage.setItem('matrix', JSON.stringify(state));
const finish = (outcome) => location.assign('/done?' + new URLSearchParams(outcome));
const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
const challenge = (response) => Object.fromEntries([...(response.headers.get('www-authenticate') ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));

async function rpc(method, params, headers = {}) {
  const request = { jsonrpc: '2.0', method, params };
  if (!method.startsWith('notifications/')) request.id = ++state.id;
  save();
  const response = await fetch(MCP, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-11-25',
      ...(state.token ? { authorization: 'Bearer ' + state.token } : {}),
      ...(state.session ? { 'mcp-session-id': state.session } : {}),
      ...headers,
    },
    body: JSON.stringify(request),
  });
  const text = await response.text();
  const data = text.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5)).pop() ?? text;
  return { response, message: data.trim() === '' ? undefined : JSON.parse(data) };
}

async function authorize(scope) {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  state.verifier = verifier;
  state.state = base64url(crypto.getRandomValues(new Uint8Array(16)));
  save();
  const url = new URL(state.as.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: state.clientId,
    redirect_uri: location.origin + '/callback',
    scope,
    state: state.state,
    resource: state.resource,
    code_challenge: base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
    code_challenge_method: 'S256',
  });
  location.assign(url);
}

async function callTool(name, args) {
  const { response, message } = await rpc('tools/call', { name, arguments: args }, { 'mcp-method': 'tools/call', 'mcp-name': name });
  if (response.status === 403) {
    state.pending = name;
    await authorize(challenge(response).scope);
    return undefined;
  }
  return message?.result?.content?.[0]?.text;
}

async function begin() {
  const { response } = await rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } });
  if (response.status !== 401) return finish({ error: 'expected 401, got ' + response.status });
  const { resource_metadata: resourceMetadata, scope } = challenge(response);
  const prm = await (await fetch(resourceMetadata, { headers: { 'mcp-protocol-version': '2025-11-25' } })).json();
  const issuer = prm.authorization_servers[0];
  state.resource = prm.resource;
  state.as = await (await fetch(issuer + '/.well-known/oauth-authorization-server', { headers: { 'mcp-protocol-version': '2025-11-25' } })).json();
  const registration = await fetch(state.as.registration_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'matrix browser page',
      redirect_uris: [location.origin + '/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
    }),
  });
  state.clientId = (await registration.json()).client_id;
  await authorize(scope);
}

async function resume() {
  const params = new URLSearchParams(location.search);
  if (params.get('state') !== state.state) return finish({ error: 'state mismatch' });
  const token = await fetch(state.as.token_endpoint, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: params.get('code'),
      redirect_uri: location.origin + '/callback',
      client_id: state.clientId,
      code_verifier: state.verifier,
      resource: state.resource,
    }),
  });
  state.token = (await token.json()).access_token;
  if (!state.session) {
    const { response, message } = await rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } });
    // What the page shows when the server refuses: the error's message.
    if (message?.error) return finish({ error: message.error.message });
    state.session = response.headers.get('mcp-session-id');
    await rpc('notifications/initialized', {});
  }
  if (TOOL) {
    const text = await callTool(TOOL, ARGS);
    if (text !== undefined) finish({ text });
    return;
  }
  if (state.pending !== 'multiply') state.added = (await callTool('add', { a: 2, b: 3 })) === '5';
  const product = await callTool('multiply', { x: 6, y: 7 });
  if (product !== undefined) finish({ added: state.added, multiplied: product === '42' });
}

(location.pathname === '/callback' ? resume() : begin()).catch((error) => finish({ error: String(error) }));
`;

/** One tool call instead of the add-then-multiply run (the other route kinds). */
interface PageCall {
  readonly tool: string;
  readonly args: Readonly<Record<string, number>>;
}

function page(mcpUrl: URL, call?: PageCall): string {
  const script = `<script type="module">${PAGE_SCRIPT}</script>`;
  const data = call === undefined ? '' : ` data-tool="${call.tool}" data-args='${JSON.stringify(call.args)}'`;
  return `<!doctype html><html data-mcp="${mcpUrl.href}"${data}><meta charset="utf-8"><title>matrix page</title>${script}</html>`;
}

async function servePage(mcpUrl: URL, call?: PageCall): Promise<{ readonly origin: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(request.url?.startsWith('/done') ? '<!doctype html><title>done</title>' : page(mcpUrl, call));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The page's run on `url`, in a fresh tab: the outcome parameters it ended with. */
async function runPage(context: MatrixContext, url: URL, call?: PageCall): Promise<URLSearchParams> {
  const site = await servePage(url, call);
  try {
    const tab = await context.newPage();
    await tab.goto(`${site.origin}/`);
    await tab.waitForURL(/\/done\?/, { timeout: FLOW_TIMEOUT_MS });
    return new URL(tab.url()).searchParams;
  } finally {
    await site.close();
  }
}

export const browserPage: ClientDriver = {
  client: 'browser page (discovery, registration, token from the page)',
  version: (context) => `${context.chromium}, playwright-core ${packageVersion('playwright-core')}`,
  timeoutMs: 90_000,
  async run(context) {
    const outcome = await runPage(context, context.calcUrl);
    const error = outcome.get('error');
    const routes = await otherRouteKinds(context, async (url, tool, args) => {
      const answer = await runPage(context, url, { tool, args });
      const failure = answer.get('error');
      if (failure !== null) throw new Error(failure);
      return answer.get('text') ?? '';
    });
    return {
      results: { added: outcome.get('added') === 'true', multiplied: outcome.get('multiplied') === 'true' },
      ...(error === null ? {} : { notes: [`the page stopped: ${error}`] }),
      routes,
    };
  },
};
