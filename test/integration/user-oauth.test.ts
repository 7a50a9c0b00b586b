import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UrlElicitationRequiredError, type ElicitRequestURLParams } from '@modelcontextprotocol/sdk/types.js';
import { Redis } from 'ioredis';
import { SignJWT, decodeJwt, decodeProtectedHeader, importJWK, type JWK, type JWTPayload } from 'jose';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConsentBrowser, completeConsentHeadlessly } from '../../examples/demo/headless-consent.js';
import { HeadlessOAuthClientProvider } from '../../examples/demo/headless-oauth-provider.js';
import { connectWithOAuth, type OAuthSession } from '../../examples/demo/oauth-session.js';
import { startNotes, type NotesServer } from '../../examples/notes/server.js';
import { assembleGateway } from '../../src/gateway/assemble.js';
import { devAuthServerOptionsFromConfig, startDevAuthServer, type DevAuthServer } from '../../src/authserver/index.js';
import { consentKey } from '../../src/cache/cache-keys.js';
import { createMemoryStore } from '../../src/cache/memory-store.js';
import { createRedisStore, type RedisStore } from '../../src/cache/redis-store.js';
import { createGrantStore, type UserGrant } from '../../src/grants/grant-store.js';
import type { Gateway } from '../../src/gateway/build.js';
import { launchChromium, type Pages } from '../clients/browser.js';
import { captureLogs } from '../helpers/capture-logs.js';
import { compileOrThrow } from '../helpers/gateway.js';
import { freePort } from '../helpers/net.js';
import { runScript } from '../helpers/run-script.js';
import { spawnRedis, startRedis, uniquePrefix, type RedisHandle } from '../helpers/redis.js';
import { TEST_REDIS_COMMAND_TIMEOUT_MS } from '../helpers/redis-timeouts.js';
import { jsonRpcEcho, startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

/**
 * user_oauth end to end: the gateway, its own development authorization server, a second one as the notes
 * server's ("vendor") authorization server, the example notes MCP server, a real Redis, and the official SDK
 * client declaring URL elicitation. Users sign in as whoever the test says (signInAs).
 */

const KEY_SECRET = 'user-oauth-key-secret-0123456789abcdef';
const CONSENT_SECRET = 'consent-client-secret-canary-5c1e';
const NOTES_SECRET = 'notes-client-secret-canary-77d0';
const URL_ELICITATION = { elicitation: { url: {} } };
const REDIRECT_URL = 'http://127.0.0.1/oauth/callback';
const DEV_TOKEN_TTL_MS = 300_000;

let redis: RedisHandle;
let raw: Redis;
let keyPrefix: string;
let yaml: string;
let gatewayAs: DevAuthServer;
let vendorAs: DevAuthServer;
let notes: NotesServer;
let echo: TestUpstream;
let gateway: Gateway;
let gatewayUrl: string;
let notesRoute: URL;
let vendorOrigin: string;
/** The gateway's authorization server's signing key: tests forge ID tokens only it could sign. */
let keysDirectory: string;
let signingKeysFile: string;
const logs = captureLogs();

/** Who the next sign-in is, at the gateway's authorization server; at the vendor it is `<user>-at-notes`. */
let user = 'alice';
/** Added to the gateway's clock (its view of the vendor tokens' expiry). */
let clockOffset = 0;
const now = () => Date.now() + clockOffset;

/** The gateway's outgoing requests to the vendor: counted, observable, breakable. */
const vendor = {
  /** False: plays a vendor that never rotates refresh tokens (answers without one; the first one stays valid). */
  rotates: true,
  /** The refresh token the vendor really holds for each one it let the gateway keep (`rotates: false`). */
  current: new Map<string, string>(),
  down: false,
  /** Rewrites a token endpoint answer (the vendor misbehaving). */
  rewrite: undefined as ((answer: Record<string, unknown>) => Record<string, unknown>) | undefined,
  grants: [] as string[],
  /** Token endpoint requests, answered or not. */
  attempts: 0,
  /** Every access and refresh token the vendor issued, for the scans. */
  tokens: new Set<string>(),
  revocations: 0,
  /** Requests the test holds (the vendor stalling): each holds the first request it matches. */
  holds: [] as VendorHold[],
};

interface VendorHold {
  readonly matches: (path: string, grantType: string | undefined) => boolean;
  readonly reached: () => void;
  readonly released: Promise<void>;
  taken: boolean;
}

/** Holds the next vendor request `matches` picks until the test releases it; its arrival is an event to await. */
function holdNextVendorRequest(matches: VendorHold['matches']): { readonly arrived: Promise<void>; release(): void } {
  let reached: () => void = () => undefined;
  const arrived = new Promise<void>((resolve) => (reached = resolve));
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  vendor.holds.push({ matches, reached, released, taken: false });
  return { arrived, release };
}

/**
 * Lets wall-clock time pass: a stall is the thing under test when Redis expires a lock by its own clock. Never used
 * to wait for something to happen (that is always an awaited event).
 */
const stall = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const formOf = (init: RequestInit | undefined) =>
  new URLSearchParams(typeof init?.body === 'string' || init?.body instanceof URLSearchParams ? init.body : undefined);

/** Claims changed in the ID tokens of the gateway's sign-in (re-signed with its authorization server's own key). */
let idTokenChange: ((claims: JWTPayload) => JWTPayload) | undefined;

async function resignedIdToken(idToken: string, change: (claims: JWTPayload) => JWTPayload): Promise<string> {
  const { keys } = JSON.parse(await readFile(signingKeysFile, 'utf8')) as { keys: JWK[] };
  const { kid, typ } = decodeProtectedHeader(idToken);
  return new SignJWT(change(decodeJwt(idToken)))
    .setProtectedHeader({ alg: 'ES256', ...(kid === undefined ? {} : { kid }), ...(typ === undefined ? {} : { typ }) })
    .sign(await importJWK(keys[0] ?? {}, 'ES256'));
}

/** The sign-in's token answers, their ID token re-signed with `idTokenChange`. */
async function signInFetch(input: Parameters<typeof fetch>[0], init: RequestInit | undefined, url: URL): Promise<Response> {
  const response = await fetch(input, init);
  if (url.origin !== gatewayAs.issuer || url.pathname !== '/token' || !idTokenChange) return response;
  const answer = (await response.json()) as Record<string, unknown>;
  if (typeof answer.id_token === 'string') answer.id_token = await resignedIdToken(answer.id_token, idTokenChange);
  return new Response(JSON.stringify(answer), { status: response.status, headers: { 'content-type': 'application/json' } });
}

/** A non-rotating vendor's view of a refresh request: the refresh token it really holds for the one sent. */
function unrotated(init: RequestInit | undefined): RequestInit | undefined {
  const form = formOf(init);
  const sent = form.get('refresh_token');
  const current = sent === null ? undefined : vendor.current.get(sent);
  if (current === undefined) return init;
  form.set('refresh_token', current);
  return { ...init, body: form };
}

/** The gateway's outgoing requests: the vendor's counted, observable, breakable; the sign-in's ID tokens changeable. */
const gatewayFetch: typeof fetch = async (input, init) => {
  const url = new URL(input instanceof Request ? input.url : input.toString());
  if (url.origin !== vendorOrigin) return signInFetch(input, init, url);
  if (url.pathname === '/token') vendor.attempts += 1;
  if (vendor.down) throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
  if (url.pathname === '/token/revocation') vendor.revocations += 1;
  const grantType = url.pathname === '/token' ? (formOf(init).get('grant_type') ?? '') : undefined;
  const hold = vendor.holds.find((candidate) => !candidate.taken && candidate.matches(url.pathname, grantType));
  if (hold) {
    hold.taken = true;
    hold.reached();
    await hold.released;
  }
  const response = await fetch(input, grantType === 'refresh_token' && !vendor.rotates ? unrotated(init) : init);
  if (grantType === undefined) return response;
  vendor.grants.push(grantType);
  const answer = (await response.json()) as Record<string, unknown>;
  for (const name of ['access_token', 'refresh_token']) if (typeof answer[name] === 'string') vendor.tokens.add(answer[name]);
  const sent = formOf(init).get('refresh_token');
  if (!vendor.rotates && sent !== null && typeof answer.refresh_token === 'string') {
    vendor.current.set(sent, answer.refresh_token);
    delete answer.refresh_token;
  }
  const rewritten = vendor.rewrite ? vendor.rewrite(answer) : answer;
  return new Response(JSON.stringify(rewritten), { status: response.status, headers: { 'content-type': 'application/json' } });
};

const sessions: OAuthSession[] = [];
const gatewayTokens = new Set<string>();
const links = new Set<string>();

function configYaml(ports: { gateway: number; as: number; vendor: number; notes: number }, echoUrl: string): string {
  return `
listen: { host: 127.0.0.1, port: ${ports.gateway} }
public_url: http://127.0.0.1:${ports.gateway}
cache: { redis_url: "${redis.url}", key_secret: "${KEY_SECRET}", key_prefix: "${keyPrefix}" }
consent:
  login: { client_id: gateway-consent, client_secret: "\${env:CONSENT_SECRET}" }
routes:
  - name: notes
    path: /notes/mcp
    resource_name: Notes
    upstream:
      url: http://127.0.0.1:${ports.notes}/mcp
      auth:
        type: user_oauth
        issuer: http://127.0.0.1:${ports.vendor}
        client_id: gateway-at-notes
        client_secret: "\${env:NOTES_SECRET}"
        scope: [notes:read]
        resource: http://127.0.0.1:${ports.notes}/mcp
    authorization_servers: [http://127.0.0.1:${ports.as}]
    tokens: { jwt: { issuer: http://127.0.0.1:${ports.as}, algorithms: [ES256] } }
    policy: { scopes: [mcp:tools] }
  # The same vendor account, its token sent in a custom header to an upstream that records what it gets.
  - name: echo
    path: /echo/mcp
    upstream:
      url: ${echoUrl}
      auth:
        type: user_oauth
        issuer: http://127.0.0.1:${ports.vendor}
        client_id: gateway-at-notes
        client_secret: "\${env:NOTES_SECRET}"
        scope: [notes:read]
        resource: ${echoUrl}
        header: X-Notes-Token
    authorization_servers: [http://127.0.0.1:${ports.as}]
    tokens: { jwt: { issuer: http://127.0.0.1:${ports.as}, algorithms: [ES256] } }
    policy: { scopes: [mcp:tools] }
`;
}

const ENV = { CONSENT_SECRET, NOTES_SECRET };

beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
  keyPrefix = uniquePrefix('user-oauth');
  const ports = { gateway: await freePort(), as: await freePort(), vendor: await freePort(), notes: await freePort() };
  echo = await startTestUpstream();
  echo.respondWith(jsonRpcEcho);
  yaml = configYaml(ports, echo.url);
  const config = compileOrThrow(yaml, ENV);
  keysDirectory = await mkdtemp(join(tmpdir(), 'user-oauth-keys-'));
  signingKeysFile = join(keysDirectory, 'gateway-as.json');
  gatewayAs = await startDevAuthServer({ ...devAuthServerOptionsFromConfig(config, { autoApprove: true }), signingKeysFile, signInAs: () => user });
  const vendorIssuer = `http://127.0.0.1:${ports.vendor}`;
  vendorAs = await startDevAuthServer({
    ...devAuthServerOptionsFromConfig(config, { autoApprove: true, issuer: vendorIssuer }),
    signInAs: () => `${user}-at-notes`,
  });
  vendorOrigin = vendorAs.issuer;
  notes = await startNotes({ port: ports.notes, issuer: vendorAs.issuer, jwksUri: vendorAs.jwksUri, resource: `http://127.0.0.1:${ports.notes}/mcp` });
  gateway = assembleGateway(config, { logger: logs.logger, fetch: gatewayFetch, now });
  await gateway.app.listen({ host: '127.0.0.1', port: ports.gateway });
  await gateway.warm();
  gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
  notesRoute = new URL(`${gatewayUrl}/notes/mcp`);
});

afterAll(async () => {
  await Promise.allSettled(sessions.map((session) => session.close()));
  await gateway.close();
  await Promise.all([notes.close(), echo.close(), gatewayAs.close(), vendorAs.close()]);
  raw.disconnect();
  await redis.stop();
  await rm(keysDirectory, { recursive: true, force: true });
});

beforeEach(() => {
  Object.assign(vendor, { down: false, rewrite: undefined, revocations: 0, attempts: 0, rotates: true });
  idTokenChange = undefined;
  vendor.grants.length = 0;
  vendor.holds.length = 0;
  clockOffset = 0;
});

/** The MCP client of `who`: OAuth at the gateway's authorization server as `who`, URL elicitation declared. */
function clientOf(who: string): HeadlessOAuthClientProvider {
  user = who;
  return new HeadlessOAuthClientProvider({ redirectUrl: REDIRECT_URL, refreshTokens: false });
}

async function connect(provider: HeadlessOAuthClientProvider): Promise<OAuthSession> {
  const session = await connectWithOAuth(notesRoute, provider, { capabilities: URL_ELICITATION });
  sessions.push(session);
  const token = provider.tokens()?.access_token;
  if (token) gatewayTokens.add(token);
  return session;
}

/** Connecting as `who` runs into the URL elicitation; its one URL elicitation. */
async function elicited(provider: HeadlessOAuthClientProvider): Promise<ElicitRequestURLParams> {
  const error: unknown = await connect(provider).then(
    () => new Error('connected without consent'),
    (failure: unknown) => failure,
  );
  const token = provider.tokens()?.access_token;
  if (token) gatewayTokens.add(token);
  expect(error).toBeInstanceOf(UrlElicitationRequiredError);
  const [elicitation] = (error as UrlElicitationRequiredError).elicitations;
  if (elicitation?.mode !== 'url') throw new Error('no URL elicitation');
  links.add(new URL(elicitation.url).searchParams.get('link') ?? '');
  return elicitation;
}

async function connected(who: string): Promise<{ provider: HeadlessOAuthClientProvider; session: OAuthSession }> {
  const provider = clientOf(who);
  const elicitation = await elicited(provider);
  user = who;
  const consent = await completeConsentHeadlessly(new URL(elicitation.url), { decision: 'allow' });
  expect(consent.heading).toBe('Connected');
  return { provider, session: await connect(provider) };
}

async function callText(session: OAuthSession, name: string, args: Record<string, string> = {}): Promise<string> {
  const result = (await session.client.callTool({ name, arguments: args })) as { content: { type: string; text: string }[] };
  return result.content[0]?.text ?? '';
}

/** A store of this suite's Redis prefix, connected. */
async function connectedStore(): Promise<RedisStore> {
  const store = createRedisStore({ url: redis.url, keyPrefix, commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
  expect(await store.whenReady(10_000)).toBe(true);
  return store;
}

async function grantOf(subject: string): Promise<UserGrant | undefined> {
  const store = await connectedStore();
  try {
    const found = await createGrantStore(store, Buffer.from(KEY_SECRET)).get({ issuer: gatewayAs.issuer, subject }, 'notes');
    if (found.kind === 'unavailable') throw new Error('the grant store did not answer');
    return found.kind === 'found' ? found.value : undefined;
  } finally {
    await store.close();
  }
}

const auditLines = () => logs.lines.filter((line) => line.includes('"grant audit"')).map((line) => JSON.parse(line) as Record<string, unknown>);

function post(body: Record<string, unknown>, token: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(notesRoute, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

describe('user_oauth: URL elicitation, consent, first call (SDK client with URL elicitation, two real authorization servers, Redis)', () => {
  it('no grant → the SDK client gets URLElicitationRequiredError (-32042) naming a single-use consent link on the gateway; consent; the first call works with the vendor token', async () => {
    const provider = clientOf('alice');
    const elicitation = await elicited(provider);
    expect(elicitation.url).toMatch(new RegExp(`^${gatewayUrl}/consent/connect\\?link=[A-Za-z0-9_-]{43}$`));
    expect(elicitation.elicitationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(elicitation.message).toContain('Notes');

    user = 'alice';
    const consent = await completeConsentHeadlessly(new URL(elicitation.url), { decision: 'allow' });
    expect(consent).toMatchObject({ status: 200, heading: 'Connected' });
    expect(consent.visited).toEqual(expect.arrayContaining([`${gatewayAs.issuer}/auth`, `${vendorAs.issuer}/auth`, `${gatewayUrl}/consent/callback`]));
    expect(vendor.grants).toEqual(['authorization_code']);

    const session = await connect(provider);
    expect(await callText(session, 'add_note', { text: 'alice note' })).toBe('added note 1');
    expect(await callText(session, 'list_notes')).toBe('1. alice note');
    const granted = auditLines().find((line) => line.action === 'grant' && line.outcome === 'ok');
    expect(granted).toMatchObject({ route: 'notes', by: 'user' });
    expect(granted?.principal).toMatch(/^[\w-]{22}$/);
  });

  it('an SDK client without URL elicitation: connecting fails with an error whose message holds the consent link; after consent through that link it connects and calls', async () => {
    const provider = clientOf('paula');
    const error: unknown = await connectWithOAuth(notesRoute, provider).then(
      () => new Error('connected without consent'),
      (failure: unknown) => failure,
    );
    const token = provider.tokens()?.access_token;
    if (token) gatewayTokens.add(token);
    expect(error).not.toBeInstanceOf(UrlElicitationRequiredError);
    const [url] = String((error as Error).message).match(/https?:\/\/\S+\/consent\/connect\?link=[A-Za-z0-9_-]{43}/) ?? [];
    expect(url).toBeDefined();
    links.add(new URL(url ?? '').searchParams.get('link') ?? '');
    user = 'paula';
    expect(await completeConsentHeadlessly(new URL(url ?? ''), { decision: 'allow' })).toMatchObject({ heading: 'Connected' });
    const session = await connectWithOAuth(notesRoute, provider);
    sessions.push(session);
    expect(await callText(session, 'list_notes')).toBe('(no notes)');
  });

  it('isolation: a second principal connects their own account and never sees the first one\'s notes', async () => {
    const bob = await connected('bob');
    expect(await callText(bob.session, 'list_notes')).toBe('(no notes)');
    expect(await callText(bob.session, 'add_note', { text: 'bob note' })).toBe('added note 1');
    const alice = await connect(clientOf('alice'));
    // alice's grant from the first test (same Redis): her notes, not bob's.
    expect(await callText(alice, 'list_notes')).toBe('1. alice note');
    expect((await grantOf('alice'))?.accessToken).not.toBe((await grantOf('bob'))?.accessToken);
  });

  it('a consent link sent to someone else → 403 "Wrong account"; nothing connected for either; the vendor is never reached', async () => {
    const elicitation = await elicited(clientOf('carol'));
    user = 'mallory';
    const consent = await completeConsentHeadlessly(new URL(elicitation.url), { decision: 'allow' });
    expect(consent).toMatchObject({ status: 403, heading: 'Wrong account' });
    expect(consent.visited.some((url) => url.startsWith(vendorAs.issuer))).toBe(false);
    expect(await grantOf('carol')).toBeUndefined();
    expect(await grantOf('mallory')).toBeUndefined();
    expect(auditLines().at(-1)).toMatchObject({ action: 'grant', outcome: 'denied', reason: 'signed_in_as_another_principal' });
    expect(consent.html).not.toContain('carol');
    expect(consent.html).not.toContain('mallory');
  });

  it('a replayed consent link → "Link expired" (single use)', async () => {
    const elicitation = await elicited(clientOf('carol'));
    const first = await new ConsentBrowser().walk(new URL(elicitation.url), { decision: 'deny' });
    expect(first).toMatchObject({ kind: 'page', heading: 'Not connected' });
    const replay = await new ConsentBrowser().walk(new URL(elicitation.url), { decision: 'allow' });
    expect(replay).toMatchObject({ kind: 'page', status: 400, heading: 'Link expired' });
    expect(await grantOf('carol')).toBeUndefined();
  });

  it('state mismatch at the login callback and at the vendor callback → "Not connected"; no grant', async () => {
    const tamper = (url: URL) => {
      url.searchParams.set('state', 'x'.repeat(43));
      return url;
    };
    for (const path of ['/consent/login/callback', '/consent/callback']) {
      const elicitation = await elicited(clientOf('dave'));
      const browser = new ConsentBrowser();
      const stopped = await browser.walk(new URL(elicitation.url), { decision: 'allow', stopBefore: (next) => next.pathname === path });
      if (stopped.kind !== 'stopped') throw new Error(`never reached ${path}`);
      const result = await browser.walk(tamper(stopped.next), { decision: 'allow' });
      expect(result).toMatchObject({ kind: 'page', status: 400, heading: 'Not connected' });
    }
    expect(await grantOf('dave')).toBeUndefined();
    expect(vendor.grants).toEqual([]);
  });

  it('the consent page names the MCP server by its name and public resource identifier, never by its internal upstream URL', async () => {
    const elicitation = await elicited(clientOf('yusuf'));
    const browser = new ConsentBrowser();
    await browser.walk(new URL(elicitation.url), { decision: 'allow', stopBefore: (next) => next.pathname === '/consent/decide' });
    const html = browser.page?.html ?? '';
    expect(html).toContain('<h1>Connect Notes</h1>');
    expect(html).toContain(`<dt>MCP server</dt><dd><code>${gatewayUrl}/notes/mcp</code></dd>`);
    expect(html).not.toContain(new URL(notes.url).host);
  });

  it('a login callback carrying error= with the wrong state is a state mismatch: no "refused" denial is recorded for the victim\'s link', async () => {
    const elicitation = await elicited(clientOf('vera'));
    const browser = new ConsentBrowser();
    const stopped = await browser.walk(new URL(elicitation.url), { decision: 'allow', stopBefore: (next) => next.pathname === '/consent/login/callback' });
    if (stopped.kind !== 'stopped') throw new Error('never reached the login callback');
    const forged = new URL(`${gatewayUrl}/consent/login/callback?error=access_denied&state=${'x'.repeat(43)}`);
    const audited = auditLines().length;
    expect(await browser.walk(forged, { decision: 'allow' })).toMatchObject({ kind: 'page', status: 400, heading: 'Not connected' });
    expect(auditLines().slice(audited)).toEqual([]);
    expect(logs.lines.filter((line) => line.includes('consent page refused')).at(-1)).toContain('"reason":"login_state_mismatch"');
  });

  it.each([
    ['/consent/login/callback', 'the vendor\'s', 'Not connected', () => vendorAs.issuer],
    ['/consent/callback', 'the gateway\'s', 'Not connected', () => gatewayAs.issuer],
    ['/consent/login/callback', 'no', 'Connected', () => undefined],
    ['/consent/callback', 'no', 'Connected', () => undefined],
  ])('RFC 9207: an authorization response at %s naming %s issuer → "%s"', async (path, _whose, heading, iss) => {
    const who = `wanda-${heading.length}-${path.length}`;
    const elicitation = await elicited(clientOf(who));
    const browser = new ConsentBrowser();
    const stopped = await browser.walk(new URL(elicitation.url), { decision: 'allow', stopBefore: (next) => next.pathname === path });
    if (stopped.kind !== 'stopped') throw new Error(`never reached ${path}`);
    const issuer = iss();
    if (issuer === undefined) stopped.next.searchParams.delete('iss');
    else stopped.next.searchParams.set('iss', issuer);
    const result = await browser.walk(stopped.next, { decision: 'allow' });
    expect(result).toMatchObject({ kind: 'page', heading });
    expect((await grantOf(who)) !== undefined).toBe(heading === 'Connected');
  });

  it('both authorization servers name themselves in their authorization responses (RFC 9207 iss), so the check above applies', async () => {
    const elicitation = await elicited(clientOf('xavier'));
    const seen: URL[] = [];
    const noteCallbacks = (next: URL) => {
      if (next.pathname.endsWith('/callback')) seen.push(next);
      return false;
    };
    await new ConsentBrowser().walk(new URL(elicitation.url), { decision: 'allow', stopBefore: noteCallbacks });
    expect(seen.map((url) => [url.pathname, url.searchParams.get('iss')])).toEqual([
      ['/consent/login/callback', gatewayAs.issuer],
      ['/consent/callback', vendorAs.issuer],
    ]);
  });

  it('a vendor code issued for another principal\'s flow is refused (PKCE): no grant for either', async () => {
    const atCallback = (next: URL) => next.pathname === '/consent/callback';
    const erinLink = await elicited(clientOf('erin'));
    user = 'erin';
    const erin = new ConsentBrowser();
    const erinStop = await erin.walk(new URL(erinLink.url), { decision: 'allow', stopBefore: atCallback });
    const frankLink = await elicited(clientOf('frank'));
    user = 'frank';
    const frankStop = await new ConsentBrowser().walk(new URL(frankLink.url), { decision: 'allow', stopBefore: atCallback });
    if (erinStop.kind !== 'stopped' || frankStop.kind !== 'stopped') throw new Error('flows did not reach the callback');

    const swapped = new URL(erinStop.next);
    swapped.searchParams.set('code', frankStop.next.searchParams.get('code') ?? '');
    const result = await erin.walk(swapped, { decision: 'allow' });
    expect(result).toMatchObject({ kind: 'page', status: 400, heading: 'Not connected' });
    expect(vendor.grants).toEqual(['authorization_code']);
    expect(await grantOf('erin')).toBeUndefined();
    expect(await grantOf('frank')).toBeUndefined();
    expect(auditLines().at(-1)).toMatchObject({ action: 'grant', outcome: 'failed', reason: 'token_endpoint_refused_400' });
  });

  it.each([
    ['without access_token', (answer: Record<string, unknown>) => ({ ...answer, access_token: undefined }), 'token_endpoint_malformed'],
    ['with token_type DPoP', (answer: Record<string, unknown>) => ({ ...answer, token_type: 'DPoP' }), 'token_endpoint_unsupported_token_type'],
  ])('a vendor token response %s → "Not connected"; nothing stored', async (_title, rewrite, reason) => {
    const elicitation = await elicited(clientOf('grace'));
    vendor.rewrite = rewrite;
    user = 'grace';
    const consent = await completeConsentHeadlessly(new URL(elicitation.url), { decision: 'allow' });
    expect(consent).toMatchObject({ status: 400, heading: 'Not connected' });
    expect(await grantOf('grace')).toBeUndefined();
    expect(auditLines().at(-1)).toMatchObject({ action: 'grant', outcome: 'failed', reason });
  });
});

describe('user_oauth: each check of the consent forms and the sign-in refuses on its own', () => {
  /** Where a cross-origin form comes from, and who is tested with it (one user per case: a grant ends elicitation). */
  const FOREIGN_ORIGINS = [
    ['another site', 'https://evil.example', 'quinn'],
    ['another origin of the same site', 'http://127.0.0.1:1', 'quincy'],
  ];

  /** A browser at the consent page of a fresh link for `who`: the form's CSRF token and where it posts. */
  async function atConsentPage(who: string): Promise<{ browser: ConsentBrowser; csrf: string; decide: URL }> {
    const elicitation = await elicited(clientOf(who));
    const browser = new ConsentBrowser();
    const stopped = await browser.walk(new URL(elicitation.url), { decision: 'allow', stopBefore: (next) => next.pathname === '/consent/decide' });
    if (stopped.kind !== 'stopped') throw new Error('the consent page was not shown');
    return { browser, csrf: /name="csrf" value="([^"]+)"/.exec(browser.page?.html ?? '')?.[1] ?? '', decide: stopped.next };
  }

  const formPost = (fields: Record<string, string>, origin: string): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams(fields).toString(),
  });

  it.each([
    ['Allow', 'a wrong CSRF token', { csrf: 'y'.repeat(43) }],
    ['Allow', 'no CSRF token', {}],
    ['Deny', 'a wrong CSRF token', { csrf: 'y'.repeat(43) }],
    ['Deny', 'no CSRF token', {}],
  ])('%s with %s → 400 "Not connected": no vendor redirect, nothing connected, no denial recorded', async (button, _case, fields: Record<string, string>) => {
    const { browser, decide } = await atConsentPage('paul');
    const audited = auditLines().length;
    const result = await browser.submit(decide, { ...fields, decision: button.toLowerCase() }, { decision: 'allow' });
    expect(result).toMatchObject({ kind: 'page', status: 400, heading: 'Not connected' });
    expect(result.kind === 'page' && result.visited.some((url) => url.startsWith(vendorAs.issuer))).toBe(false);
    expect(vendor.grants).toEqual([]);
    expect(await grantOf('paul')).toBeUndefined();
    expect(auditLines().slice(audited)).toEqual([]);
  });

  it.each(FOREIGN_ORIGINS)('Allow from %s (right CSRF token and cookie) → 400, the flow untouched: the same form from the page then connects', async (_case, origin, who) => {
    const { browser, csrf, decide } = await atConsentPage(who);
    const crossOrigin = await browser.walk(decide, { decision: 'allow' }, formPost({ csrf, decision: 'allow' }, origin));
    expect(crossOrigin).toMatchObject({ kind: 'page', status: 400, heading: 'Not connected' });
    expect(vendor.grants).toEqual([]);
    expect(await browser.submit(decide, { csrf, decision: 'allow' }, { decision: 'allow' })).toMatchObject({ kind: 'page', heading: 'Connected' });
    expect(vendor.grants).toEqual(['authorization_code']);
  });

  it('Deny from another site (right CSRF token and cookie) → 400, no denial recorded', async () => {
    const { browser, csrf, decide } = await atConsentPage('quentin');
    const audited = auditLines().length;
    expect(await browser.walk(decide, { decision: 'deny' }, formPost({ csrf, decision: 'deny' }, 'https://evil.example'))).toMatchObject({ status: 400 });
    expect(auditLines().slice(audited)).toEqual([]);
  });

  it('Origin: null (the browser hides the page\'s origin) with the right CSRF token and cookie → Connected: the token is the protection', async () => {
    const { browser, csrf, decide } = await atConsentPage('rosa');
    expect(await browser.walk(decide, { decision: 'allow' }, formPost({ csrf, decision: 'allow' }, 'null'))).toMatchObject({ kind: 'page', heading: 'Connected' });
    expect(await grantOf('rosa')).toBeDefined();
  });

  it.each(FOREIGN_ORIGINS)('Disconnect from %s (right CSRF token and cookie) → 400, the grant kept: the same form from the page then revokes', async (_case, origin, who) => {
    const sven = `${who}-sven`;
    await connected(sven);
    const browser = new ConsentBrowser();
    await browser.walk(new URL(`${gatewayUrl}/consent/grants`), { decision: 'deny' });
    const csrf = /name="csrf" value="([^"]+)"/.exec(browser.page?.html ?? '')?.[1] ?? '';
    const revokeUrl = new URL(`${gatewayUrl}/consent/grants/revoke`);
    expect(await browser.walk(revokeUrl, { decision: 'deny' }, formPost({ csrf, route: 'notes', decision: 'revoke' }, origin))).toMatchObject({ status: 400 });
    expect(await grantOf(sven)).toBeDefined();
    expect(vendor.revocations).toBe(0);
    expect(await browser.submit(revokeUrl, { csrf, route: 'notes', decision: 'revoke' }, { decision: 'deny' })).toMatchObject({ heading: 'Connected accounts' });
    expect(await grantOf(sven)).toBeUndefined();
  });

  it.each([
    ['its claims unchanged (the control: re-signing alone is accepted)', 'Connected', 'tara', (claims: JWTPayload) => claims],
    ['a wrong nonce', 'Not connected', 'tamsin', (claims: JWTPayload) => ({ ...claims, nonce: 'n'.repeat(43) })],
    ['another audience', 'Not connected', 'tobias', (claims: JWTPayload) => ({ ...claims, aud: 'another-client' })],
  ])('an ID token signed by the gateway\'s authorization server with %s → "%s"', async (_case, heading, who, change) => {
    const elicitation = await elicited(clientOf(who));
    idTokenChange = change;
    const consent = await completeConsentHeadlessly(new URL(elicitation.url), { decision: 'allow' });
    const accepted = heading === 'Connected';
    expect(consent).toMatchObject({ status: accepted ? 200 : 400, heading });
    expect(consent.visited.some((url) => url.startsWith(vendorAs.issuer))).toBe(accepted);
    if (!accepted) expect(logs.lines.filter((line) => line.includes('consent page refused')).at(-1)).toContain('"reason":"login_invalid_id_token"');
    expect((await grantOf(who)) !== undefined).toBe(accepted);
  });

  it('one consent link opened 8 times at once (tabs, link previews) → exactly one sign-in; the others "Link expired"', async () => {
    const elicitation = await elicited(clientOf('ugo'));
    const link = new URL(elicitation.url).searchParams.get('link') ?? '';
    const linkKey = consentKey(Buffer.from(KEY_SECRET), 'link', link);
    const opened = 8;
    // Every redemption reads the link before any of them can delete it: only the single use of the delete decides.
    let reads = 0;
    let allRead: () => void = () => undefined;
    const together = new Promise<void>((resolve) => (allRead = resolve));
    const inner = await connectedStore();
    const racing: RedisStore = {
      ...inner,
      get: async (key) => {
        if (key === linkKey && ++reads === opened) allRead();
        if (key === linkKey) await together;
        return inner.get(key);
      },
    };
    const replica = assembleGateway(compileOrThrow(yaml, ENV), { logger: logs.logger, fetch: gatewayFetch, now, cache: racing });
    try {
      const answers = await Promise.all(Array.from({ length: opened }, () => replica.app.inject({ method: 'GET', url: `/consent/connect?link=${link}` })));
      expect(answers.filter((answer) => answer.statusCode === 302).map((answer) => new URL(answer.headers.location as string).origin)).toEqual([gatewayAs.issuer]);
      expect(answers.filter((answer) => answer.statusCode === 400 && answer.body.includes('Link expired'))).toHaveLength(opened - 1);
    } finally {
      await replica.close();
    }
  });
});

describe('user_oauth in a real browser (Debian\'s Chromium, as .ci/run installs it)', () => {
  let chromium: Pages | undefined;

  beforeAll(async () => {
    chromium = await launchChromium();
  });
  afterAll(() => chromium?.close());

  /** Clicks a form button; the POST it sent (with every header Chromium put on it) once the next page has loaded. */
  async function submitForm(page: Page, button: string) {
    const [post] = await Promise.all([page.waitForRequest((request) => request.method() === 'POST'), page.waitForEvent('load'), page.click(button)]);
    return { origin: (await post.allHeaders()).origin, status: (await post.response())?.status(), heading: await page.locator('h1').textContent() };
  }

  it('Allow, then Disconnect, in Chromium: both forms carry the gateway\'s Origin; Connected, the first call works, then the grant is gone', async () => {
    const provider = clientOf('rita');
    const elicitation = await elicited(provider);
    const page = await (chromium as Pages).newPage();
    user = 'rita';
    await page.goto(elicitation.url);
    expect(await page.locator('h1').textContent()).toBe('Connect Notes');
    expect(await submitForm(page, 'button[value=allow]')).toEqual({ origin: gatewayUrl, status: 303, heading: 'Connected' });
    expect(new URL(page.url()).pathname).toBe('/consent/callback');
    expect(await callText(await connect(provider), 'list_notes')).toBe('(no notes)');

    await page.goto(`${gatewayUrl}/consent/grants`);
    expect(await page.locator('h1').textContent()).toBe('Connected accounts');
    expect(await submitForm(page, 'button[value=revoke]')).toEqual({ origin: gatewayUrl, status: 303, heading: 'Connected accounts' });
    expect(await page.locator('body').textContent()).toContain('No connected accounts');
    expect(vendor.revocations).toBe(1);
    expect(await grantOf('rita')).toBeUndefined();
  });

  it('signing in through the development authorization server\'s own pages (no auto-approve): its forms carry its Origin; Sign in, Approve, then the grants page', async () => {
    const [asPort, gatewayPort] = [await freePort(), await freePort()];
    const issuer = `http://127.0.0.1:${asPort}`;
    const config = compileOrThrow(
      `
public_url: http://127.0.0.1:${gatewayPort}
consent:
  login: { client_id: gateway-consent, client_secret: "\${env:CONSENT_SECRET}" }
routes:
  - name: notes
    path: /notes/mcp
    upstream:
      url: http://127.0.0.1:1/mcp
      auth: { type: user_oauth, issuer: ${vendorAs.issuer}, client_id: gateway-at-notes, scope: [notes:read], resource: http://127.0.0.1:1/mcp }
    authorization_servers: [${issuer}]
    tokens: { jwt: { issuer: ${issuer}, algorithms: [ES256] } }
`,
      ENV,
    );
    const manual = await startDevAuthServer(devAuthServerOptionsFromConfig(config, { autoApprove: false }));
    const own = assembleGateway(config, { logger: logs.logger, cache: createMemoryStore() });
    try {
      await own.app.listen({ host: '127.0.0.1', port: gatewayPort });
      const page = await (chromium as Pages).newPage();
      await page.goto(`http://127.0.0.1:${gatewayPort}/consent/grants`);
      expect(await page.locator('h1').textContent()).toBe('Sign in');
      expect(await submitForm(page, 'button:text("Sign in as demo-user")')).toMatchObject({ origin: issuer, heading: 'Authorize gateway-consent' });
      expect(await submitForm(page, 'button:text("Approve")')).toMatchObject({ origin: issuer, heading: 'Connected accounts' });
    } finally {
      await own.close();
      await manual.close();
    }
  });
});

describe('user_oauth: what the upstream receives', () => {
  it('upstream.auth.header: the user\'s vendor token in that header, bare; never the caller\'s token or an Authorization header', async () => {
    const route = new URL(`${gatewayUrl}/echo/mcp`);
    const provider = clientOf('alice');
    const error: unknown = await connectWithOAuth(route, provider, { capabilities: URL_ELICITATION }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(UrlElicitationRequiredError);
    const [elicitation] = (error as UrlElicitationRequiredError).elicitations;
    user = 'alice';
    expect(await completeConsentHeadlessly(new URL(elicitation?.mode === 'url' ? elicitation.url : ''), { decision: 'allow' })).toMatchObject({ heading: 'Connected' });
    const caller = provider.tokens()?.access_token ?? '';
    echo.requests.length = 0;
    const response = await fetch(route, {
      method: 'POST',
      headers: { authorization: `Bearer ${caller}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(200);
    const [received] = echo.requests;
    expect(vendor.tokens.has(String(received?.headers['x-notes-token']))).toBe(true);
    expect(received?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(received)).not.toContain(caller);
  });
});

describe('user_oauth: the wire forms of the elicitation', () => {
  let token: string;

  beforeAll(async () => {
    const provider = clientOf('henry');
    await elicited(provider);
    token = provider.tokens()?.access_token ?? '';
  });

  it('2025-11-25 initialize declaring URL elicitation → HTTP 200, JSON-RPC error -32042 with the request id, data.elicitations and the link in its message', async () => {
    const initialize = { jsonrpc: '2.0', id: 'req-7', method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: URL_ELICITATION, clientInfo: { name: 't', version: '1' } } };
    const response = await post(initialize, token);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id: unknown; error: { code: number; message: string; data: { elicitations: { url: string }[] } } };
    expect(body.id).toBe('req-7');
    expect(body.error.code).toBe(-32042);
    expect(body.error.data.elicitations).toEqual([
      { mode: 'url', elicitationId: expect.any(String) as string, url: expect.stringContaining('/consent/connect?link=') as string, message: expect.any(String) as string },
    ]);
    expect(body.error.message).toContain(body.error.data.elicitations[0]?.url);
  });

  it('2025-11-25 initialize without URL elicitation → HTTP 200, a JSON-RPC error whose message holds a working consent link', async () => {
    const initialize = { jsonrpc: '2.0', id: 8, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const response = await post(initialize, token);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { id: unknown; error: { code: number; message: string; data?: unknown } };
    expect(body).toMatchObject({ id: 8, error: { code: -32600 } });
    expect(body.error.data).toBeUndefined();
    const [url] = body.error.message.match(/https?:\/\/\S+\/consent\/connect\?link=[A-Za-z0-9_-]+/) ?? [];
    expect(url).toBeDefined();
    user = 'henry';
    expect(await new ConsentBrowser().walk(new URL(url ?? ''), { decision: 'deny' })).toMatchObject({ heading: expect.any(String) as string });
  });

  it('2025-11-25 tools/call without a grant → a tool result with isError whose text holds the consent link (no -32042)', async () => {
    const response = await post({ jsonrpc: '2.0', id: 'req-9', method: 'tools/call', params: { name: 'list_notes' } }, token, { 'mcp-protocol-version': '2025-11-25' });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain('-32042');
    const body = JSON.parse(text) as { id: unknown; result: { isError: boolean; content: { type: string; text: string }[] } };
    expect(body.id).toBe('req-9');
    expect(body.result.isError).toBe(true);
    expect(body.result.content).toEqual([{ type: 'text', text: expect.stringMatching(/open https?:\/\/\S+\/consent\/connect\?link=[A-Za-z0-9_-]{43} in a browser/) as string }]);
  });

  it('2025-11-25 notification (no JSON-RPC answer possible) → HTTP 403 with the same error, id null', async () => {
    const response = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, token);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ id: null, error: { code: -32042 } });
  });

  it('2026-07-28 tools/call from a client declaring URL elicitation → InputRequiredResult with an elicitation/create URL request (no -32042)', async () => {
    const meta = { 'io.modelcontextprotocol/clientCapabilities': URL_ELICITATION, 'io.modelcontextprotocol/protocolVersion': '2026-07-28' };
    const response = await post(
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_notes', _meta: meta } },
      token,
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'list_notes' },
    );
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain('-32042');
    const body = JSON.parse(text) as { id: number; result: { resultType: string; inputRequests: Record<string, { method: string; params: Record<string, unknown> }> } };
    expect(body.id).toBe(3);
    expect(body.result.resultType).toBe('input_required');
    const requests = Object.values(body.result.inputRequests);
    expect(requests).toEqual([{ method: 'elicitation/create', params: { mode: 'url', message: expect.any(String) as string, url: expect.stringContaining('/consent/connect?link=') as string } }]);
  });

  it('2026-07-28 tools/call without the URL elicitation capability → a tool result with isError whose text holds the consent link', async () => {
    const response = await post({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'list_notes' } }, token, {
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'list_notes',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: 4, result: { isError: true, content: [{ type: 'text', text: expect.stringContaining('/consent/connect?link=') as string }] } });
  });

  it('2026-07-28 server/discover and tools/list (no InputRequiredResult possible) → HTTP 200, a JSON-RPC error whose message holds the consent link', async () => {
    for (const method of ['server/discover', 'tools/list']) {
      const response = await post({ jsonrpc: '2.0', id: 5, method }, token, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ id: 5, error: { code: -32600, message: expect.stringContaining('/consent/connect?link=') as string } });
    }
  });

  it('2026-07-28 notification (no JSON-RPC answer possible) → 403 without a link', async () => {
    const response = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, token, {
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'notifications/cancelled',
    });
    expect(response.status).toBe(403);
    expect(await response.text()).not.toContain('/consent/');
  });
});

/** A tools/call of list_notes through one gateway replica, in the caller's MCP session. */
function listNotesThrough(replica: Gateway, token: string, sessionId: string) {
  return replica.app.inject({
    method: 'POST',
    url: '/notes/mcp',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'list_notes', arguments: {} } }),
  });
}

describe('user_oauth: refresh, vendor faults, revocation', () => {
  it('refresh before expiry: one refresh however many concurrent calls, across two gateway replicas; the refresh token rotates', async () => {
    const { session } = await connected('ivan');
    const before = await grantOf('ivan');
    const replica = assembleGateway(compileOrThrow(yaml, ENV), { logger: logs.logger, fetch: gatewayFetch, now, cache: await connectedStore() });
    try {
      await replica.warm();
      clockOffset = DEV_TOKEN_TTL_MS - 30_000;
      vendor.grants.length = 0;
      const sessionId = session.transport.sessionId ?? '';
      const token = [...gatewayTokens].at(-1) ?? '';
      const viaReplica = () => listNotesThrough(replica, token, sessionId);
      const results = await Promise.all([callText(session, 'list_notes'), callText(session, 'list_notes'), viaReplica(), viaReplica(), callText(session, 'list_notes')]);
      expect(results.filter((result) => result === '(no notes)')).toHaveLength(3);
      expect(results.filter((result) => typeof result !== 'string').map((result) => (result as { statusCode: number }).statusCode)).toEqual([200, 200]);
      expect(vendor.grants).toEqual(['refresh_token']);
      const after = await grantOf('ivan');
      expect(after?.refreshToken).toBeDefined();
      expect(after?.refreshToken).not.toBe(before?.refreshToken);
      expect(after?.accessToken).not.toBe(before?.accessToken);
      expect(auditLines().filter((line) => line.action === 'refresh')).toHaveLength(1);
    } finally {
      await replica.close();
    }
  });

  it('an expired grant on two replicas at once: one refresh; the other waits for its result and never reuses the rotated refresh token', async () => {
    const { session } = await connected('ivy');
    const token = [...gatewayTokens].at(-1) ?? '';
    const sessionId = session.transport.sessionId ?? '';
    const replicas = await Promise.all(
      [0, 1].map(async () => assembleGateway(compileOrThrow(yaml, ENV), { logger: logs.logger, fetch: gatewayFetch, now, cache: await connectedStore() })),
    );
    try {
      await Promise.all(replicas.map((replica) => replica.warm()));
      clockOffset = DEV_TOKEN_TTL_MS + 1_000;
      vendor.grants.length = 0;
      const call = (replica: Gateway) => listNotesThrough(replica, token, sessionId);
      const answers = await Promise.all([...replicas, ...replicas].map(call));
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 200]);
      expect(vendor.grants).toEqual(['refresh_token']);
      expect(await grantOf('ivy')).toBeDefined();
    } finally {
      await Promise.all(replicas.map((replica) => replica.close()));
    }
  });

  it('a replica that takes the refresh lock after another one refreshed uses that result: the rotated refresh token is never reused', async () => {
    const { session } = await connected('iris');
    const token = [...gatewayTokens].at(-1) ?? '';
    const sessionId = session.transport.sessionId ?? '';
    // Replica B's store holds its refresh lock request until A has refreshed.
    const inner = await connectedStore();
    let reached: () => void = () => undefined;
    const atLock = new Promise<void>((resolve) => (reached = resolve));
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held: RedisStore = {
      ...inner,
      setIfAbsent: async (key, value, ttlMs) => {
        reached();
        await gate;
        return inner.setIfAbsent(key, value, ttlMs);
      },
    };
    const [a, b] = [
      assembleGateway(compileOrThrow(yaml, ENV), { logger: logs.logger, fetch: gatewayFetch, now, cache: await connectedStore() }),
      assembleGateway(compileOrThrow(yaml, ENV), { logger: logs.logger, fetch: gatewayFetch, now, cache: held }),
    ];
    try {
      await Promise.all([a.warm(), b.warm()]);
      clockOffset = DEV_TOKEN_TTL_MS + 1_000;
      vendor.grants.length = 0;
      const call = (replica: Gateway) => listNotesThrough(replica, token, sessionId);
      const late = call(b);
      await atLock;
      expect((await call(a)).statusCode).toBe(200);
      release();
      expect((await late).statusCode).toBe(200);
      expect(vendor.grants).toEqual(['refresh_token']);
      expect(await grantOf('iris')).toBeDefined();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('the vendor stalls a refresh past timeout + 100 ms (metadata, then the token request, each within its timeout): the lock still holds, the second replica waits for the result; exactly one refresh', async () => {
    const { session } = await connected('uma');
    const token = [...gatewayTokens].at(-1) ?? '';
    const sessionId = session.transport.sessionId ?? '';
    const timeoutMs = 3_000;
    const slowYaml = yaml.replaceAll('        scope: [notes:read]\n', `        scope: [notes:read]\n        timeout: ${timeoutMs}ms\n`);
    // Replica B's attempt to take the refresh lock, observed.
    const inner = await connectedStore();
    let tried: (taken: boolean) => void = () => undefined;
    const lockAttempt = new Promise<boolean>((resolve) => (tried = resolve));
    const observed: RedisStore = {
      ...inner,
      setIfAbsent: async (key, value, ttlMs) => {
        const taken = await inner.setIfAbsent(key, value, ttlMs);
        if (key.startsWith('grant-refresh:')) tried(taken);
        return taken;
      },
    };
    const [a, b] = [
      assembleGateway(compileOrThrow(slowYaml, ENV), { logger: logs.logger, fetch: gatewayFetch, now, cache: await connectedStore() }),
      assembleGateway(compileOrThrow(slowYaml, ENV), { logger: logs.logger, fetch: gatewayFetch, now, cache: observed }),
    ];
    // Fresh replicas: A's refresh starts with a metadata lookup.
    const metadata = holdNextVendorRequest((path) => path.startsWith('/.well-known/'));
    const refresh = holdNextVendorRequest((path, grantType) => path === '/token' && grantType === 'refresh_token');
    try {
      await Promise.all([a.warm(), b.warm()]);
      clockOffset = DEV_TOKEN_TTL_MS + 1_000;
      vendor.grants.length = 0;
      const first = listNotesThrough(a, token, sessionId);
      // Each half stays within its request's timeout; together they outlast timeout + 100 ms.
      await metadata.arrived;
      await stall(timeoutMs / 2 + 100);
      metadata.release();
      await refresh.arrived;
      await stall(timeoutMs / 2 + 100);
      const second = listNotesThrough(b, token, sessionId);
      expect(await lockAttempt).toBe(false);
      refresh.release();
      expect((await first).statusCode).toBe(200);
      expect((await second).statusCode).toBe(200);
      expect(vendor.grants).toEqual(['refresh_token']);
      expect(await grantOf('uma')).toBeDefined();
    } finally {
      metadata.release();
      refresh.release();
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('vendor authorization server down with an expired grant → 502 JSON-RPC error, never a 401; one attempt per backoff; the grant is kept and refreshes once it is back', async () => {
    const { session } = await connected('judy');
    const token = [...gatewayTokens].at(-1) ?? '';
    clockOffset = DEV_TOKEN_TTL_MS + 1_000;
    vendor.down = true;
    vendor.attempts = 0;
    vendor.grants.length = 0;
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const response = await post({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'list_notes', arguments: {} } }, token, {
        'mcp-session-id': session.transport.sessionId ?? '',
      });
      answers.push({ status: response.status, challenge: response.headers.get('www-authenticate'), body: (await response.json()) as { id: number; error?: { message: string } } });
    }
    expect(answers.map((answer) => answer.status)).toEqual([502, 502, 502]);
    expect(answers.every((answer) => answer.challenge === null)).toBe(true);
    expect(answers[0]?.body).toMatchObject({ id: 0, error: { message: 'Gateway could not obtain credentials for the upstream MCP server' } });
    expect(vendor.attempts).toBe(1);
    expect(auditLines().filter((line) => line.action === 'refresh' && line.outcome === 'failed')).toHaveLength(1);
    expect(await grantOf('judy')).toBeDefined();

    vendor.down = false;
    clockOffset += 5_001;
    expect(await callText(session, 'list_notes')).toBe('(no notes)');
    expect(vendor.grants).toEqual(['refresh_token']);
  });

  it('a refresh answered without access_token drops the grant: the next tools/call in the session is a tool error holding the consent link, the next connect an elicitation', async () => {
    const { session, provider } = await connected('kate');
    clockOffset = DEV_TOKEN_TTL_MS + 1_000;
    vendor.rewrite = (answer) => ({ ...answer, access_token: undefined });
    const result = (await session.client.callTool({ name: 'list_notes', arguments: {} })) as { isError?: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(new RegExp(`open ${gatewayUrl}/consent/connect\\?link=[A-Za-z0-9_-]{43} in a browser`));
    expect(await grantOf('kate')).toBeUndefined();
    expect(auditLines().filter((line) => line.action === 'drop').at(-1)).toMatchObject({ reason: 'refresh_refused' });
    vendor.rewrite = undefined;
    await elicited(provider);
  });

  it('a refresh answer without refresh_token (a vendor that does not rotate) keeps the old one (RFC 6749 §6): the next refresh succeeds with it', async () => {
    const { session } = await connected('xena');
    const before = await grantOf('xena');
    vendor.rotates = false;
    vendor.grants.length = 0;
    clockOffset = DEV_TOKEN_TTL_MS + 1_000;
    expect(await callText(session, 'list_notes')).toBe('(no notes)');
    const refreshed = await grantOf('xena');
    expect(refreshed?.accessToken).not.toBe(before?.accessToken);
    expect(refreshed?.refreshToken).toBe(before?.refreshToken);
    clockOffset += DEV_TOKEN_TTL_MS + 1_000;
    expect(await callText(session, 'list_notes')).toBe('(no notes)');
    expect(vendor.grants).toEqual(['refresh_token', 'refresh_token']);
    expect((await grantOf('xena'))?.refreshToken).toBe(before?.refreshToken);
  });

  it('the upstream answers 401 (vendor token refused) → 502, the grant is dropped, the next request elicits again', async () => {
    const { session, provider } = await connected('leo');
    notes.refuseTokensOf('leo-at-notes');
    await expect(session.client.callTool({ name: 'list_notes', arguments: {} })).rejects.toMatchObject({ code: 502 });
    expect(await grantOf('leo')).toBeUndefined();
    expect(auditLines().at(-1)).toMatchObject({ action: 'drop', reason: 'upstream_401', by: 'gateway' });
    await elicited(provider);
  });

  it('the user revokes on /consent/grants (after signing in): RFC 7009 at the vendor, the grant is gone, the old refresh token is dead', async () => {
    const { provider } = await connected('mia');
    const grant = await grantOf('mia');
    user = 'mia';
    const browser = new ConsentBrowser();
    const page = await browser.walk(new URL(`${gatewayUrl}/consent/grants`), { decision: 'deny' });
    if (page.kind !== 'page') throw new Error('no grants page');
    expect(page.heading).toBe('Connected accounts');
    expect(page.html).toContain('Notes');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)?.[1] ?? '';
    const revoked = await browser.submit(new URL(`${gatewayUrl}/consent/grants/revoke`), { csrf, route: 'notes', decision: 'revoke' }, { decision: 'deny' });
    expect(revoked).toMatchObject({ kind: 'page', heading: 'Connected accounts' });
    expect(revoked.kind === 'page' && revoked.html).toContain('No connected accounts');
    expect(vendor.revocations).toBe(1);
    expect(await grantOf('mia')).toBeUndefined();
    expect(auditLines().at(-1)).toMatchObject({ action: 'revoke', by: 'user', outcome: 'ok', reason: 'revoked_at_authorization_server' });

    const refresh = await fetch(`${vendorAs.issuer}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`gateway-at-notes:${NOTES_SECRET}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: grant?.refreshToken ?? '', resource: notes.url }),
    });
    expect(refresh.status).toBe(400);
    await elicited(provider);
  });

  it('/consent/grants lists a route still waiting for a connection with a Connect button: Connect → the consent page → Allow → Connected, and the first call works', async () => {
    const provider = clientOf('tess');
    await elicited(provider);
    user = 'tess';
    const browser = new ConsentBrowser();
    const page = await browser.walk(new URL(`${gatewayUrl}/consent/grants`), { decision: 'deny' });
    if (page.kind !== 'page') throw new Error('no grants page');
    expect(page.html).toContain('No connected accounts');
    expect(page.html).toContain('Waiting for a connection');
    expect(page.html).toMatch(/<h3>Notes[^<]*<\/h3>/);
    expect(page.html).toContain(`action="${gatewayUrl}/consent/grants/connect"`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)?.[1] ?? '';
    const connectedPage = await browser.submit(new URL(`${gatewayUrl}/consent/grants/connect`), { csrf, route: 'notes', decision: 'connect' }, { decision: 'allow' });
    expect(connectedPage).toMatchObject({ kind: 'page', heading: 'Connected' });
    expect(await grantOf('tess')).toBeDefined();
    expect(auditLines().at(-1)).toMatchObject({ action: 'grant', outcome: 'ok', by: 'user' });
    expect(await callText(await connect(provider), 'list_notes')).toBe('(no notes)');
    const after = await browser.walk(new URL(`${gatewayUrl}/consent/grants`), { decision: 'deny' });
    expect(after.kind === 'page' && after.html).not.toMatch(/<h3>Notes/);
  });

  it('a Connect form with a wrong CSRF token, none, from another origin or for an unknown route starts nothing', async () => {
    user = 'sven';
    const browser = new ConsentBrowser();
    const connectUrl = new URL(`${gatewayUrl}/consent/grants/connect`);
    const page = await browser.walk(new URL(`${gatewayUrl}/consent/grants`), { decision: 'deny' });
    const csrf = (page.kind === 'page' && /name="csrf" value="([^"]+)"/.exec(page.html)?.[1]) || '';
    expect(await browser.submit(connectUrl, { csrf: 'y'.repeat(43), route: 'notes' }, { decision: 'allow' })).toMatchObject({ status: 400 });
    expect(await browser.submit(connectUrl, { route: 'notes' }, { decision: 'allow' })).toMatchObject({ status: 400 });
    expect(await browser.submit(connectUrl, { csrf, route: 'nowhere' }, { decision: 'allow' })).toMatchObject({ status: 400 });
    const crossSite = await fetch(connectUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ csrf, route: 'notes' }),
    });
    expect(crossSite.status).toBe(400);
    expect(await grantOf('sven')).toBeUndefined();
  });

  it('a revoke form with a wrong CSRF token or none changes nothing (another origin: see "Disconnect from")', async () => {
    await connected('nina');
    user = 'nina';
    const browser = new ConsentBrowser();
    await browser.walk(new URL(`${gatewayUrl}/consent/grants`), { decision: 'deny' });
    const revokeUrl = new URL(`${gatewayUrl}/consent/grants/revoke`);
    expect(await browser.submit(revokeUrl, { csrf: 'y'.repeat(43), route: 'notes' }, { decision: 'deny' })).toMatchObject({ status: 400 });
    expect(await browser.submit(revokeUrl, { route: 'notes' }, { decision: 'deny' })).toMatchObject({ status: 400 });
    expect(await grantOf('nina')).toBeDefined();
    expect(vendor.revocations).toBe(0);
  });
});

const cli = (args: readonly string[], env: Record<string, string>) => runScript('src/main.ts', args, env);

describe('user_oauth: operators and what is stored', () => {
  it('grants list|revoke --config F [--route R] [--subject S]: lists without tokens, revokes with an operator audit line', { timeout: 60_000 }, async () => {
    await connected('oscar');
    const dir = await mkdtemp(join(tmpdir(), 'mcpgw-grants-'));
    try {
      const file = join(dir, 'config.yaml');
      await writeFile(file, yaml);
      const listed = await cli(['grants', 'list', '--config', file, '--subject', 'oscar'], ENV);
      expect(listed.stderr).toBe('');
      expect(listed.code).toBe(0);
      const [header, row, ...rest] = listed.stdout.trim().split('\n');
      expect(header).toBe('ROUTE\tISSUER\tSUBJECT\tPRINCIPAL\tSCOPES\tCONNECTED\tEXPIRES\tREFRESH');
      expect(row?.split('\t').slice(0, 3)).toEqual(['notes', gatewayAs.issuer, 'oscar']);
      expect(rest).toEqual([]);
      const grant = await grantOf('oscar');
      for (const secret of [grant?.accessToken, grant?.refreshToken]) expect(listed.stdout).not.toContain(secret);

      const revoked = await cli(['grants', 'revoke', '--config', file, '--route', 'notes', '--subject', 'oscar'], ENV);
      expect(revoked.code).toBe(0);
      expect(revoked.stdout).toBe('revoked 1 grant(s)\n');
      const audit = JSON.parse(revoked.stderr.split('\n').find((line) => line.includes('grant audit')) ?? '{}') as Record<string, unknown>;
      expect(audit).toMatchObject({ action: 'revoke', by: 'operator', route: 'notes', principal: row?.split('\t')[3] });
      expect(await grantOf('oscar')).toBeUndefined();

      expect((await cli(['grants', 'revoke', '--config', file], ENV)).code).toBe(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('1,000 anonymous consent GETs (grants page, links, both callbacks) store nothing: a sign-in in progress travels sealed in the cookie', async () => {
    const keys = async () => (await raw.keys(`${keyPrefix}*`)).length;
    const before = await keys();
    const paths = ['/consent/grants', `/consent/connect?link=${'l'.repeat(43)}`, '/consent/login/callback?code=c&state=s', '/consent/callback?code=c&state=s'];
    for (let round = 0; round < 10; round += 1) {
      const answers = await Promise.all(Array.from({ length: 100 }, (_, index) => gateway.app.inject({ method: 'GET', url: paths[index % paths.length] ?? '' })));
      expect(answers.filter((answer) => answer.statusCode === 302)).toHaveLength(25);
    }
    expect(await keys()).toBeLessThanOrEqual(before);
  });

  it('H1 nothing readable in Redis and no token in any log line: keys and values hold no user, route, link or token', async () => {
    const keys = await raw.keys(`${keyPrefix}*`);
    expect(keys.length).toBeGreaterThan(5);
    const values = await Promise.all(keys.map((key) => raw.get(key)));
    const dump = [...keys, ...values].join('\n');
    // Readable means JSON, a token, a link or a name (names of 5+ letters: shorter ones occur in base64 by chance).
    const secrets = [...vendor.tokens, ...gatewayTokens, ...links, 'alice', 'carol', 'oscar', 'notes', 'gateway-at-notes', 'Bearer', '{', '"'];
    for (const secret of secrets) expect(dump.replaceAll(keyPrefix, '')).not.toContain(secret);
    const logText = logs.text();
    for (const secret of [...vendor.tokens, ...gatewayTokens, ...links, CONSENT_SECRET, NOTES_SECRET]) expect(logText).not.toContain(secret);
  });
});

describe('user_oauth: store faults and expiry (in-process clock)', () => {
  it('the grant store down → 503 + Retry-After (fail closed), nothing forwarded', async () => {
    const dead = await spawnRedis();
    const config = compileOrThrow(yaml.replace(redis.url, dead.url), ENV);
    const store = createRedisStore({ url: dead.url, keyPrefix: 'x:', commandTimeoutMs: TEST_REDIS_COMMAND_TIMEOUT_MS });
    const isolated = assembleGateway(config, { logger: logs.logger, cache: store });
    try {
      expect(await store.whenReady(10_000)).toBe(true);
      await dead.kill();
      const token = [...gatewayTokens].at(0) ?? '';
      const response = await isolated.app.inject({
        method: 'POST',
        url: '/notes/mcp',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(response.statusCode).toBe(503);
      expect(response.headers['retry-after']).toBeDefined();
      expect(response.json()).toMatchObject({ error: 'temporarily_unavailable' });
    } finally {
      await isolated.close();
      await dead.stop();
    }
  });

  it('a consent link expires after consent.link_ttl (10 min)', async () => {
    let time = Date.now();
    const clock = () => time;
    const isolated = assembleGateway(compileOrThrow(yaml, ENV), { logger: logs.logger, cache: createMemoryStore({ now: clock }), now: clock });
    try {
      const token = [...gatewayTokens].at(0) ?? '';
      const linkOf = async () => {
        const answer = await isolated.app.inject({
          method: 'POST',
          url: '/notes/mcp',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: URL_ELICITATION } }),
        });
        const url = new URL(answer.json<{ error: { data: { elicitations: { url: string }[] } } }>().error.data.elicitations[0]?.url ?? '');
        return `${url.pathname}${url.search}`;
      };
      const fresh = await isolated.app.inject({ method: 'GET', url: await linkOf() });
      expect(fresh.statusCode).toBe(302);
      const stale = await linkOf();
      time += 600_001;
      const expired = await isolated.app.inject({ method: 'GET', url: stale });
      expect(expired.statusCode).toBe(400);
      expect(expired.body).toContain('Link expired');
      expect(expired.headers['content-security-policy']).toContain("default-src 'none'");
    } finally {
      await isolated.close();
    }
  });
});
