import { hash, randomBytes, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { Client } from 'undici';
import type { LoadMode, RequestFactory, RequestSpec } from './load.js';
import { DECISION_SECRET, ROUTES, type ReferenceProxy, type Stack } from './stack.js';

export type ModeName = 'c1' | 'c64' | 'r1000' | 'r2000';

export const MODES: Readonly<Record<ModeName, LoadMode>> = {
  c1: { kind: 'closed', connections: 1 },
  c64: { kind: 'closed', connections: 64 },
  r1000: { kind: 'rate', perSecond: 1000, connections: 64 },
  r2000: { kind: 'rate', perSecond: 2000, connections: 64 },
};

/** Which upstream a scenario ends at; the calculator runs with the gateway moved to the client's core. */
export type UpstreamKind = 'trivial' | 'calculator';

/** What sits between the load generator and the upstream; `decision` asks the gateway's decision listener only. */
export type Via = 'direct' | 'gateway' | 'decision' | ReferenceProxy;

export interface LoadScenario {
  readonly id: string;
  readonly label: string;
  readonly via: Via;
  readonly upstream: UpstreamKind;
  /** The direct scenario this one is compared with (same upstream, same request shape). */
  readonly baseline: string;
  readonly expectStatus: number;
  readonly modes: readonly ModeName[];
  readonly quickModes: readonly ModeName[];
  readonly request: RequestFactory;
  /** Runs before each load of the scenario, outside the measurement (signs the DPoP proofs the load will send). */
  readonly prepare?: () => Promise<void>;
}

const CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } });
const CALL_64K = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'add', arguments: { a: 1, b: 2, note: 'x'.repeat(64 * 1024 - 100) } },
});
const BASE_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-11-25',
};

const post = (path: string, token: string | undefined, body: string, extra: Record<string, string> = {}): RequestSpec => ({
  method: 'POST',
  path,
  headers: { ...BASE_HEADERS, ...(token !== undefined && { authorization: `Bearer ${token}` }), ...extra },
  body,
});

/** Tokens a run needs, minted before any measurement so signing never competes with the load. */
export interface Tokens {
  readonly jwt: string;
  /** More distinct tokens than the gateway's verified-token cache holds (10,000): every use is a cache miss. */
  readonly freshPool: readonly string[];
  readonly badSignature: string;
  readonly unknownKid: string;
  readonly calc: string;
  readonly dpop: DpopClient;
}

/** More proofs than one load of the DPoP scenario sends (warm-up included) at the rates this machine reaches. */
const DPOP_PROOFS_PER_LOAD = 40_000;

/**
 * A DPoP client (RFC 9449): a token bound to its key, and a new proof for every request, each with its own jti (the
 * gateway refuses a replayed one). The proofs are signed before each load, so signing never competes with it.
 */
export interface DpopClient {
  readonly token: string;
  /** The next unused proof. */
  next(): string;
  /** Signs a fresh pool of proofs (their iat is now: well within the route's window during one load). */
  refill(): Promise<void>;
}

async function dpopClient(stack: Stack): Promise<DpopClient> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const publicJwk: JWK = await exportJWK(publicKey);
  const token = await stack.mintBound('dpop', await calculateJwkThumbprint(publicJwk));
  const claims = { htm: 'POST', htu: stack.resourceOf('dpop'), ath: hash('sha256', token, 'base64url') };
  const sign = (key: CryptoKey) => new SignJWT({ ...claims, jti: randomUUID() }).setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: publicJwk }).setIssuedAt().sign(key);
  let proofs: string[] = [];
  let used = 0;
  return {
    token,
    next: () => proofs[used++ % proofs.length] ?? '',
    async refill() {
      proofs = [];
      used = 0;
      for (let i = 0; i < DPOP_PROOFS_PER_LOAD; i += 1) proofs.push(await sign(privateKey));
    },
  };
}

export async function mintTokens(stack: Stack, freshPoolSize: number): Promise<Tokens> {
  const freshPool: string[] = [];
  for (let i = 0; i < freshPoolSize; i += 1) freshPool.push(await stack.mint('jwt'));
  return {
    jwt: await stack.mint('jwt'),
    freshPool,
    badSignature: await stack.mint('jwt', 'bad-signature'),
    unknownKid: await stack.mint('jwt', 'unknown-kid'),
    calc: await stack.mint('calc'),
    dpop: await dpopClient(stack),
  };
}

/** Opens an MCP session on the calculator (initialize + initialized) and returns its Mcp-Session-Id. */
export async function openCalculatorSession(origin: string, path: string, token: string): Promise<string> {
  const client = new Client(origin);
  try {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } },
    });
    const opened = await client.request(post(path, token, initialize));
    await opened.body.text();
    const sessionId = opened.headers['mcp-session-id'];
    if (opened.statusCode !== 200 || typeof sessionId !== 'string') {
      throw new Error(`calculator initialize via ${origin}${path} answered ${opened.statusCode}`);
    }
    const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const acknowledged = await client.request(post(path, token, initialized, { 'mcp-session-id': sessionId }));
    await acknowledged.body.dump();
    return sessionId;
  } finally {
    await client.close();
  }
}

export interface ScenarioContext {
  readonly stack: Stack;
  readonly tokens: Tokens;
  readonly calcSessions: { readonly direct: string; readonly gateway: string };
}

/** The load scenarios, in the order each repetition runs them (interleaving direct and gateway runs). */
export function loadScenarios({ stack, tokens, calcSessions }: ScenarioContext): LoadScenario[] {
  const upstreamPath = stack.upstream.path;
  const calcPath = stack.calculator.path;
  // A new opaque token per request (per bench process): the gateway has never seen it, so it must introspect.
  const missPrefix = `bench-miss-${randomBytes(6).toString('hex')}-`;
  return [
    {
      id: 'direct',
      label: 'direct to upstream',
      via: 'direct',
      upstream: 'trivial',
      baseline: 'direct',
      expectStatus: 200,
      modes: ['c1', 'c64', 'r1000', 'r2000'],
      quickModes: ['c1', 'c64', 'r1000'],
      request: () => post(upstreamPath, tokens.jwt, CALL),
    },
    ...(['undici-pool', 'reply-from'] as const).map(
      (via): LoadScenario => ({
        id: `ref-${via}`,
        label: `reference proxy without auth: ${via === 'undici-pool' ? 'node:http + undici Pool' : 'fastify + @fastify/reply-from'}`,
        via,
        upstream: 'trivial',
        baseline: 'direct',
        expectStatus: 200,
        modes: ['c1', 'c64'],
        quickModes: ['c1', 'c64'],
        request: () => post(stack.references[via].path, tokens.jwt, CALL),
      }),
    ),
    {
      id: 'jwt-reused',
      label: 'gateway, JWT, one token reused',
      via: 'gateway',
      upstream: 'trivial',
      baseline: 'direct',
      expectStatus: 200,
      modes: ['c1', 'c64', 'r1000', 'r2000'],
      quickModes: ['c1', 'c64', 'r1000'],
      request: () => post(ROUTES.jwt, tokens.jwt, CALL),
    },
    {
      id: 'dpop-jwt',
      label: 'gateway, DPoP-bound JWT reused, new proof per request',
      via: 'gateway',
      upstream: 'trivial',
      baseline: 'direct',
      expectStatus: 200,
      modes: ['c1', 'c64'],
      quickModes: ['c64'],
      request: () => ({
        method: 'POST',
        path: ROUTES.dpop,
        headers: { ...BASE_HEADERS, authorization: `DPoP ${tokens.dpop.token}`, dpop: tokens.dpop.next() },
        body: CALL,
      }),
      prepare: () => tokens.dpop.refill(),
    },
    {
      id: 'jwt-fresh',
      label: 'gateway, JWT, new token per request',
      via: 'gateway',
      upstream: 'trivial',
      baseline: 'direct',
      expectStatus: 200,
      modes: ['c1', 'c64'],
      quickModes: [],
      request: (i) => post(ROUTES.jwt, tokens.freshPool[i % tokens.freshPool.length], CALL),
    },
    {
      // What nginx's auth_request subrequest costs the gateway: the verdict alone, no forwarding.
      id: 'decision-nginx',
      label: 'decision listener, nginx auth_request, JWT reused',
      via: 'decision',
      upstream: 'trivial',
      baseline: 'direct',
      expectStatus: 200,
      modes: ['c1', 'c64'],
      quickModes: ['c64'],
      request: () => ({
        method: 'GET',
        path: '/_mcp_decision',
        headers: {
          ...BASE_HEADERS,
          authorization: `Bearer ${tokens.jwt}`,
          'x-original-uri': ROUTES.jwt,
          'x-original-method': 'POST',
          'x-mcp-decision-secret': DECISION_SECRET,
        },
      }),
    },
    {
      id: 'introspection-hit',
      label: 'gateway, introspection, Redis cache hit',
      via: 'gateway',
      upstream: 'trivial',
      baseline: 'direct',
      expectStatus: 200,
      modes: ['c1', 'c64', 'r1000'],
      quickModes: ['c64'],
      request: () => post(ROUTES.opaque, 'bench-opaque-token-reused', CALL),
    },
    {
      id: 'introspection-miss',
      label: 'gateway, introspection, cache miss (AS 5 ms)',
      via: 'gateway',
      upstream: 'trivial',
      baseline: 'direct',
      expectStatus: 200,
      modes: ['c1', 'c64'],
      quickModes: [],
      request: (i) => post(ROUTES.opaque, `${missPrefix}${i}`, CALL),
    },
    {
      id: 'reject-no-token',
      label: 'gateway, 401: no token',
      via: 'gateway',
      upstream: 'trivial',
      baseline: 'direct',
      expectStatus: 401,
      modes: ['c64'],
      quickModes: [],
      request: () => post(ROUTES.jwt, undefined, CALL),
    },
    {
      id: 'reject-bad-signature',
      label: 'gateway, 401: bad signature',
      via: 'gateway',
      upstream: 'trivial',
      baseline: 'direct',
      expectStatus: 401,
      modes: ['c64'],
      quickModes: ['c64'],
      request: () => post(ROUTES.jwt, tokens.badSignature, CALL),
    },
    {
      id: 'direct-64k',
      label: 'direct, 64 KB request body',
      via: 'direct',
      upstream: 'trivial',
      baseline: 'direct-64k',
      expectStatus: 200,
      modes: ['c1', 'c64'],
      quickModes: [],
      request: () => post(upstreamPath, tokens.jwt, CALL_64K),
    },
    {
      id: 'jwt-64k',
      label: 'gateway, JWT, 64 KB request body',
      via: 'gateway',
      upstream: 'trivial',
      baseline: 'direct-64k',
      expectStatus: 200,
      modes: ['c1', 'c64'],
      quickModes: [],
      request: () => post(ROUTES.jwt, tokens.jwt, CALL_64K),
    },
    {
      id: 'calc-direct',
      label: 'direct to calculator (MCP SDK)',
      via: 'direct',
      upstream: 'calculator',
      baseline: 'calc-direct',
      expectStatus: 200,
      modes: ['c1', 'c64'],
      quickModes: ['c64'],
      request: () => post(calcPath, tokens.calc, CALL, { 'mcp-session-id': calcSessions.direct }),
    },
    {
      id: 'calc-gateway',
      label: 'gateway (own core), JWT, calculator',
      via: 'gateway',
      upstream: 'calculator',
      baseline: 'calc-direct',
      expectStatus: 200,
      modes: ['c1', 'c64'],
      quickModes: ['c64'],
      request: () => post(ROUTES.calc, tokens.calc, CALL, { 'mcp-session-id': calcSessions.gateway }),
    },
  ];
}

/** Request shape of the unknown-kid storm: a well-formed token whose kid the JWKS does not have. */
export function unknownKidRequest(tokens: Tokens): RequestFactory {
  return () => post(ROUTES.jwt, tokens.unknownKid, CALL);
}

export const SSE_HEADERS = (token: string): Record<string, string> => ({
  accept: 'text/event-stream',
  'mcp-protocol-version': '2025-11-25',
  authorization: `Bearer ${token}`,
});
