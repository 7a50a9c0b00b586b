import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { JWK } from 'jose';
import type { Check } from './check.js';
import { SPEC } from './check.js';
import { addressPolicy } from './address-policy.js';
import { discover, jwksUriOf, type Discovery } from './discovery.js';
import { boundKeyOf, createDpopSigner, dpopResourceFetch, type DpopSigner } from './dpop.js';
import { authorizationServerChecks, resourceMetadataChecks, usableAuthorizationServer } from './discovery-checks.js';
import { recordingFetch, type RecordingFetch } from './recording-fetch.js';
import { describeRegistration, registrationApproaches } from './registration.js';
import { canonicalResource } from './resource-identifier.js';
import { selectScope } from './scope-selection.js';
import { tokenChecks } from './token-checks.js';
import { bearerChallenge, parseWwwAuthenticate, type Challenge } from './www-authenticate.js';

export interface ProbeOptions {
  readonly url: URL;
  /** Checked against what discovery found, then sent; never printed. */
  readonly token?: string;
  /** The private key of a DPoP-bound token (from the token store): the token is then sent with a proof. */
  readonly dpopKey?: JWK | undefined;
  /** `--client-id`: the client has pre-registered credentials. */
  readonly clientId?: string;
  /** `--allow-private`: discovered URLs may name non-public hosts (address-policy.ts). */
  readonly allowPrivate?: boolean;
  /** Each HTTP request without response headers after this long is aborted. */
  readonly timeoutMs: number;
  /** Milliseconds since the epoch (token lifetimes). */
  readonly now?: () => number;
  readonly fetch?: FetchLike;
}

export type ProbeResult =
  | { readonly reachable: true; readonly url: string; readonly checks: readonly Check[] }
  | { readonly reachable: false; readonly url: string; readonly reason: string };

/** What an MCP client sends first. */
function initializeRequest(headers: Record<string, string> = {}): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'mcp-auth-gateway-probe', version: '1' } },
    }),
  };
}

interface Answer {
  readonly status: number;
  readonly challenge: string | null;
  readonly sessionId: string | null;
  /** Where a redirect points, without userinfo, query or fragment (they may carry secrets). */
  readonly redirectTo?: string;
}

function redirectTarget(response: Response, url: URL): string | undefined {
  const location = response.headers.get('location');
  if (response.status < 300 || response.status >= 400 || location === null || !URL.canParse(location, url.href)) return undefined;
  const target = new URL(location, url);
  target.username = target.password = target.search = target.hash = '';
  return target.href;
}

/**
 * The MCP endpoint's own answer (a redirect is not followed: what another URL answers is not this server's answer,
 * and a token must not travel on to it), its body discarded (an SSE stream would never end).
 */
async function answerOf(http: RecordingFetch, url: URL, init: RequestInit, fetchVia: FetchLike = http.fetch): Promise<Answer> {
  const response = await fetchVia(url, { ...init, redirect: 'manual' });
  await response.body?.cancel();
  const redirectTo = redirectTarget(response, url);
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    sessionId: response.headers.get('mcp-session-id'),
    ...(redirectTo === undefined ? {} : { redirectTo }),
  };
}

/** `307, a redirect to …` for a redirect, else the status alone. */
function describeAnswer(answer: Answer): string {
  if (answer.redirectTo === undefined) return String(answer.status);
  return `${answer.status}, a redirect to ${answer.redirectTo} (not followed: probe reports the answers of the URL it was given; probe that URL if it is the MCP endpoint)`;
}

function unauthenticatedCheck(id: string, what: string, answer: Answer): Check {
  const { status } = answer;
  if (status === 401) return { id, status: 'pass', message: `${what} without a token: 401`, spec: SPEC.challenge401 };
  if (status >= 200 && status < 300) {
    return { id, status: 'fail', message: `${what} without a token: ${status}, so the server is not protected`, spec: SPEC.everyRequest };
  }
  return {
    id,
    status: id === 'unauthenticated-get' ? 'warn' : 'fail',
    message: `${what} without a token: ${describeAnswer(answer)} instead of 401 (authorization comes before anything else)`,
    spec: SPEC.everyRequest,
  };
}

interface ChallengeReading {
  readonly checks: Check[];
  readonly bearer?: Challenge;
}

/** Step 1: the 401's `WWW-Authenticate`, with a real RFC 9110 parser. */
function readChallenge(header: string | null | undefined): ChallengeReading {
  const check = (status: Check['status'], message: string): Check => ({ id: 'challenge', status, message, spec: SPEC.wwwAuthenticateSyntax });
  if (header === undefined) return { checks: [check('fail', 'no 401, so no challenge to read')] };
  if (header === null) return { checks: [check('fail', '401 without a WWW-Authenticate header')] };
  const parsed = parseWwwAuthenticate(header);
  if (!parsed.ok) return { checks: [check('fail', `WWW-Authenticate does not parse: ${parsed.error}`)] };
  // A resource that takes only DPoP-bound tokens challenges with DPoP alone (RFC 9449 §7.1), with the same parameters.
  const bearer = bearerChallenge(parsed.challenges) ?? parsed.challenges.find((challenge) => challenge.scheme.toLowerCase() === 'dpop');
  if (bearer === undefined) {
    return { checks: [check('fail', `no Bearer or DPoP challenge (schemes: ${parsed.challenges.map((challenge) => challenge.scheme).join(', ')})`)] };
  }
  const checks: Check[] = [];
  const { scheme } = bearer;
  const metadataUrl = bearer.params.get('resource_metadata');
  if (bearer.duplicateParams.length > 0) checks.push(check('fail', `the ${scheme} challenge repeats ${bearer.duplicateParams.join(', ')}`));
  else if (metadataUrl === undefined) checks.push(check('warn', `${scheme} challenge without resource_metadata: clients must fall back to the well-known locations`));
  else if (!URL.canParse(metadataUrl)) checks.push(check('fail', `resource_metadata "${metadataUrl}" is not an absolute URL`));
  else checks.push(check('pass', `${scheme} challenge, resource_metadata ${metadataUrl}`));

  const scope = bearer.params.get('scope');
  checks.push(
    scope === undefined
      ? { id: 'challenge-scope', status: 'warn', message: 'no scope in the challenge: clients fall back to scopes_supported', spec: SPEC.challengeScope }
      : { id: 'challenge-scope', status: 'pass', message: `scope "${scope}"`, spec: SPEC.challengeScope },
  );
  const error = bearer.params.get('error');
  if (error !== undefined) {
    checks.push({
      id: 'challenge-error',
      status: 'fail',
      message: `error="${error}" although the request carried no token: clients may take it for a rejected token`,
      spec: SPEC.noErrorWithoutToken,
    });
  }
  return { checks, bearer };
}

function registrationCheck(discovery: Discovery, clientId: string | undefined): Check {
  const server = usableAuthorizationServer(discovery);
  if (server === undefined) {
    return { id: 'registration', status: 'fail', message: 'no authorization server a client may use', spec: SPEC.registration };
  }
  const [first, ...fallbacks] = registrationApproaches(server.server, server.metadata, clientId).map(describeRegistration);
  if (first === undefined) {
    return {
      id: 'registration',
      status: 'warn',
      message: 'no Client ID Metadata Document support and no registration_endpoint: the user must supply a client_id',
      spec: SPEC.registration,
    };
  }
  const rest = fallbacks.length > 0 ? `, else ${fallbacks.join(', else ')}` : '';
  return { id: 'registration', status: 'pass', message: `a client would use ${first}${rest}`, spec: SPEC.registration };
}

function scopeCheck(bearer: Challenge | undefined, discovery: Discovery): Check {
  const selection = selectScope(bearer?.params.get('scope'), discovery.resourceMetadata?.document.scopes_supported);
  const message =
    selection.scope === undefined
      ? 'a client omits the scope parameter (no scope in the challenge, no scopes_supported)'
      : `a client requests scope "${selection.scope}" (from ${selection.source === 'challenge' ? 'the challenge' : 'scopes_supported'})`;
  return { id: 'scope-selection', status: 'pass', message, spec: SPEC.scopeSelection };
}

/**
 * Failed checks after which the token is not sent: the resource or the token's audience or issuer does not match,
 * so this URL may not be the server the token is for (a hostile URL naming another server's resource could collect
 * it). Expiry and signature failures do not say that; the server's answer to such a token is worth seeing.
 */
const WITHHOLD_AFTER = new Set(['resource', 'token-issuer', 'token-audience']);

/**
 * A warning, not a failure: the server was never asked, so nothing about its answer failed; the cause is already
 * a failed check of its own, which sets the exit code.
 */
function withheldCheck(causes: readonly string[]): Check {
  return {
    id: 'token-accepted',
    status: 'warn',
    message: `not sent: ${causes.join(', ')} failed, so this server may not be the one the token is for`,
    spec: SPEC.tokenAccepted,
  };
}

/** A DPoP-bound token (`cnf.jkt`, RFC 9449 §6.1): whether the key it is bound to is at hand to prove possession. */
async function bindingCheck(token: string, signer: DpopSigner | undefined): Promise<Check | undefined> {
  const jkt = boundKeyOf(token);
  if (jkt === undefined) return undefined;
  const check = (status: Check['status'], message: string): Check => ({ id: 'token-binding', status, message, spec: SPEC.tokenBinding });
  if (signer === undefined) return check('warn', `DPoP-bound (cnf.jkt ${jkt}) but its key is not in the token store: sent as Bearer, the server must refuse it`);
  if ((await signer.thumbprint()) !== jkt) return check('fail', `DPoP-bound to ${jkt}, but the stored key is another one (${await signer.thumbprint()})`);
  return check('pass', `DPoP-bound (cnf.jkt ${jkt}): sent as DPoP with a proof by the stored key`);
}

/** Step 6, after the token's own checks: what the server says when the token is sent (with a proof when bound). */
async function sendToken(http: RecordingFetch, url: URL, token: string, signer: DpopSigner | undefined): Promise<Check> {
  const authorization: Record<string, string> = signer === undefined ? { authorization: `Bearer ${token}` } : {};
  const request = initializeRequest(authorization);
  const fetchVia: FetchLike | undefined = signer && ((target, init) => dpopResourceFetch(signer, http.fetch, token, target, init));
  const answer = await answerOf(http, url, request, fetchVia).catch(() => undefined);
  const check = (status: Check['status'], message: string): Check => ({ id: 'token-accepted', status, message, spec: SPEC.tokenAccepted });
  if (answer === undefined) return check('fail', `POST initialize with the token failed: ${http.exchanges.at(-1)?.error ?? 'no answer'}`);
  if (answer.status >= 200 && answer.status < 300) {
    if (answer.sessionId !== null) {
      // Close the session the probe just opened.
      await answerOf(http, url, { method: 'DELETE', headers: { ...authorization, 'mcp-session-id': answer.sessionId } }, fetchVia).catch(() => undefined);
    }
    return check('pass', `POST initialize with the token: ${answer.status}`);
  }
  const parsed = answer.challenge === null ? undefined : parseWwwAuthenticate(answer.challenge);
  const challenges = parsed?.ok === true ? parsed.challenges : [];
  const bearer = bearerChallenge(challenges) ?? challenges.find((challenge) => challenge.scheme.toLowerCase() === 'dpop');
  const error = bearer?.params.get('error');
  if (answer.status === 403) {
    return check('fail', `POST initialize with the token: 403${error === undefined ? '' : ` ${error}`}, the server wants scope "${bearer?.params.get('scope') ?? '(not named)'}"`);
  }
  return check('fail', `POST initialize with the token: ${describeAnswer(answer)}${error === undefined ? '' : ` (error="${error}")`}`);
}

/**
 * `mcp-auth-gateway probe`: the MCP client's steps against `url`, each reported as a check. Unreachable only when
 * the very first request gets no HTTP answer at all.
 */
export async function probe(options: ProbeOptions): Promise<ProbeResult> {
  const { url } = options;
  const http = recordingFetch({ timeoutMs: options.timeoutMs, addresses: addressPolicy(url, options.allowPrivate ?? false), fetch: options.fetch });
  try {
    return await probeWith(http, options);
  } finally {
    await http.close();
  }
}

async function probeWith(http: RecordingFetch, options: ProbeOptions): Promise<ProbeResult> {
  const { url } = options;
  let post: Answer;
  try {
    post = await answerOf(http, url, initializeRequest());
  } catch {
    return { reachable: false, url: url.href, reason: http.exchanges.at(-1)?.error ?? 'no answer' };
  }
  const get = await answerOf(http, url, { method: 'GET', headers: { accept: 'text/event-stream' } }).catch(() => undefined);
  const checks: Check[] = [unauthenticatedCheck('unauthenticated-post', 'POST initialize', post)];
  checks.push(
    get === undefined
      ? { id: 'unauthenticated-get', status: 'warn', message: `GET failed: ${http.exchanges.at(-1)?.error ?? 'no answer'}`, spec: SPEC.everyRequest }
      : unauthenticatedCheck('unauthenticated-get', 'GET', get),
  );
  const challengeHeader = post.status === 401 ? post.challenge : get?.status === 401 ? get.challenge : undefined;
  const { checks: challengeChecks, bearer } = readChallenge(challengeHeader);
  checks.push(...challengeChecks);

  const discovery = await discover(url, bearer?.params.get('resource_metadata'), http);
  checks.push(...resourceMetadataChecks(discovery));
  for (const server of discovery.authorizationServers) checks.push(...authorizationServerChecks(server, discovery));
  checks.push(registrationCheck(discovery, options.clientId), scopeCheck(bearer, discovery));

  if (options.token !== undefined) {
    const expectations = {
      resource: discovery.resourceMetadata?.document.resource ?? canonicalResource(url),
      authorizationServers: discovery.authorizationServers.map((server) => ({
        issuer: server.metadata?.issuer ?? server.server,
        jwksUri: jwksUriOf(server.metadata),
      })),
      now: (options.now ?? Date.now)(),
      fetch: http.fetch,
    };
    checks.push(...(await tokenChecks(options.token, expectations)));
    const signer = options.dpopKey === undefined ? undefined : await createDpopSigner(options.dpopKey);
    const binding = await bindingCheck(options.token, signer);
    if (binding !== undefined) checks.push(binding);
    const causes = checks.filter((check) => check.status === 'fail' && WITHHOLD_AFTER.has(check.id)).map((check) => check.id);
    const proving = binding?.status === 'pass' ? signer : undefined;
    checks.push(causes.length > 0 ? withheldCheck(causes) : await sendToken(http, url, options.token, proving));
  }
  return { reachable: true, url: url.href, checks };
}
