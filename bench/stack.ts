import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { freePort, redisPing, spawnPinned, startNodeServer, waitFor, type BenchProcess } from './processes.js';

/** Core of the load generator; every server starts on the other one. */
export const CLIENT_CORE = 0;
export const SERVER_CORE = 1;

export const ROUTES = { jwt: '/jwt/mcp', opaque: '/opaque/mcp', calc: '/calc/mcp', dpop: '/dpop/mcp' } as const;

/** A server the load generator can send to. */
export type Endpoint = BenchProcess & { readonly origin: string; readonly path: string };

/** Proxies without auth in front of the trivial upstream: the floor of the gateway's proxy layer. */
export type ReferenceProxy = 'undici-pool' | 'reply-from';

export interface Stack {
  /** `origin`: the proxy listener; `decisionOrigin`: the decision listener (nginx-style questions). */
  readonly gateway: BenchProcess & { readonly origin: string; readonly decisionOrigin: string };
  readonly upstream: Endpoint;
  readonly calculator: Endpoint;
  readonly references: Readonly<Record<ReferenceProxy, Endpoint>>;
  readonly authority: BenchProcess;
  /** Replaces the gateway process by a fresh one (same config and port): a baseline without load history. */
  restartGateway(): Promise<void>;
  /**
   * Another gateway from `gatewayEntry` on ports of its own, with the same config and public URL (the same tokens
   * are valid there) plus `extraYaml` (top-level sections, e.g. `telemetry`): `bench/ab.ts` loads several builds at
   * once.
   */
  extraGateway(gatewayEntry: string, extraYaml?: string): Promise<Stack['gateway']>;
  /**
   * A JWT for `route` with a fresh jti: `valid` (the default), `unknown-kid` (a kid the JWKS lacks) or
   * `bad-signature` (the JWKS's kid, another key's signature).
   */
  mint(route: keyof typeof ROUTES, kind?: TokenKind): Promise<string>;
  /** A valid JWT for `route` bound to the DPoP key whose RFC 7638 thumbprint is `jkt` (`cnf.jkt`). */
  mintBound(route: keyof typeof ROUTES, jkt: string): Promise<string>;
  /** The URL a client addresses `route` by (its resource, a DPoP proof's `htu`). */
  resourceOf(route: keyof typeof ROUTES): string;
  stop(): Promise<void>;
}

export type TokenKind = 'valid' | 'unknown-kid' | 'bad-signature';

export interface StackOptions {
  /** Extra node flags for the gateway process, e.g. `--cpu-prof`, `--trace-gc`, `--max-semi-space-size=16`. */
  readonly nodeArgs?: readonly string[];
  /** Extra node flags for the reference proxies (each gets its own), e.g. `--cpu-prof` to compare profiles. */
  readonly referenceNodeArgs?: (kind: ReferenceProxy) => readonly string[];
  /** File the gateway's stdout (its log) goes to; default: discarded. */
  readonly gatewayLog?: string;
  /** How the gateway runs: the compiled entry (e.g. `dist/main.js`), or the literal `tsx` for `src/main.ts` under tsx. */
  readonly gatewayEntry: string;
}

const KID = 'bench-key-1';
const UNKNOWN_KID = 'bench-key-rotated';
const TOKEN_LIFETIME_S = 2 * 3600;

/**
 * Configuration of the gateway under test: the production entry point (`src/main.ts serve`) reads it. The trivial
 * upstream takes the length of its test SSE stream from `x-bench-events`, a header the gateway forwards only when a
 * route names it.
 */
/** What the bench's nginx-style questions send in X-Mcp-Decision-Secret (`decision.secret`). */
export const DECISION_SECRET = randomBytes(32).toString('base64url');

function gatewayYaml(port: number, publicPort: number, adminPort: number, decisionPort: number, issuer: string, upstreamUrl: string, calculatorUrl: string): string {
  const jwt = `{ issuer: "${issuer}", jwks_uri: "${issuer}/jwks", algorithms: [ES256] }`;
  const route = (name: string, path: string, upstream: string, tokens: string, extra = ''): string => `
  - name: ${name}
    path: ${path}
    upstream: { url: "${upstream}", forward_headers: [x-bench-events] }
    authorization_servers: ["${issuer}"]
    scopes_supported: [mcp:tools]
    tokens: ${tokens}
    policy: { scopes: [mcp:tools] }${extra}`;
  const introspection = `{ introspection: { endpoint: "${issuer}/introspect", issuer: "${issuer}", client_id: bench-gateway, client_secret: "\${env:BENCH_INTROSPECTION_SECRET}" } }`;
  return `listen: { host: 127.0.0.1, port: ${port} }
admin: { host: 127.0.0.1, port: ${adminPort} }
decision: { host: 127.0.0.1, port: ${decisionPort}, proxy: nginx, secret: "\${env:BENCH_DECISION_SECRET}" }
public_url: http://127.0.0.1:${publicPort}
log: { level: info }
# The 1,000-open-streams check holds them all with one token: above the default cap of 64 per principal.
limits: { max_streams_per_principal: 2000 }
cache: { redis_url: "\${env:BENCH_REDIS_URL}", key_secret: "\${env:BENCH_CACHE_KEY_SECRET}" }
routes:${route('jwt', ROUTES.jwt, upstreamUrl, `{ jwt: ${jwt} }`)}${route('opaque', ROUTES.opaque, upstreamUrl, introspection)}${route('calc', ROUTES.calc, calculatorUrl, `{ jwt: ${jwt} }`)}
${route('dpop', ROUTES.dpop, upstreamUrl, `{ jwt: ${jwt} }`, '\n    dpop: { mode: required }').slice(1)}
`;
}

function endpoint(server: BenchProcess & { readonly info: { readonly url: string } }): Endpoint {
  const url = new URL(server.info.url);
  return { ...server, origin: url.origin, path: url.pathname };
}

/** Starts authority, Redis, the trivial upstream, the calculator, the reference proxies and the gateway, all pinned to SERVER_CORE. */
export async function startStack(options: StackOptions): Promise<Stack> {
  const started: BenchProcess[] = [];
  const workDir = mkdtempSync(join(tmpdir(), 'mcp-gw-bench-'));
  try {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const rogue = await generateKeyPair('ES256');
    const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid: KID, alg: 'ES256', use: 'sig' };

    const gatewayPort = await freePort();
    const gatewayOrigin = `http://127.0.0.1:${gatewayPort}`;
    const decisionPort = await freePort();
    const authority = await startNodeServer<{ issuer: string }>('authority', SERVER_CORE, 'bench/servers/authority.ts', [], {
      env: {
        BENCH_JWKS: JSON.stringify({ keys: [publicJwk] }),
        BENCH_AUDIENCE: gatewayOrigin + ROUTES.opaque,
        BENCH_INTROSPECTION_DELAY_MS: '5',
      },
    });
    started.push(authority);
    const issuer = authority.info.issuer;

    const redisPort = await freePort();
    const redis = spawnPinned('redis', SERVER_CORE, 'redis-server', [
      '--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
    ]);
    started.push(redis);
    await waitFor('redis', () => redisPing(redisPort));

    const upstream = await startNodeServer<{ url: string }>('upstream', SERVER_CORE, 'bench/servers/upstream.ts');
    started.push(upstream);
    const calculator = await startNodeServer<{ url: string }>('calculator', SERVER_CORE, 'bench/servers/calculator.ts');
    started.push(calculator);
    const reference = async (kind: ReferenceProxy) => {
      const proxy = await startNodeServer<{ url: string }>(kind, SERVER_CORE, 'bench/servers/reference-proxy.ts', [kind === 'undici-pool' ? 'undici' : kind, upstream.info.url], {
        nodeArgs: options.referenceNodeArgs?.(kind),
      });
      started.push(proxy);
      return endpoint(proxy);
    };
    const references = { 'undici-pool': await reference('undici-pool'), 'reply-from': await reference('reply-from') };

    const writeConfig = async (name: string, port: number, ownDecisionPort: number, extraYaml = ''): Promise<string> => {
      const file = join(workDir, name);
      writeFileSync(file, gatewayYaml(port, gatewayPort, await freePort(), ownDecisionPort, issuer, upstream.info.url, calculator.info.url) + extraYaml);
      return file;
    };
    const configFile = await writeConfig('gateway.yaml', gatewayPort, decisionPort);
    const nodeArgs = options.nodeArgs ?? [];
    const entryArgs = (gatewayEntry: string) => (gatewayEntry === 'tsx' ? ['--import', 'tsx', 'src/main.ts'] : [gatewayEntry]);
    const gatewayEnv = {
      BENCH_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      BENCH_CACHE_KEY_SECRET: randomBytes(32).toString('base64url'),
      BENCH_INTROSPECTION_SECRET: randomBytes(16).toString('base64url'),
      BENCH_DECISION_SECRET: DECISION_SECRET,
    };
    const logFile = options.gatewayLog ? openSync(options.gatewayLog, 'w') : undefined;
    const spawnGateway = async (gatewayEntry: string, config: string, port: number, ownDecisionPort: number): Promise<Stack['gateway']> => {
      const spawned = spawnPinned('gateway', SERVER_CORE, process.execPath, [...nodeArgs, ...entryArgs(gatewayEntry), 'serve', '--config', config], {
        env: gatewayEnv,
        logFile,
      });
      const origin = `http://127.0.0.1:${port}`;
      const handle = { ...spawned, origin, decisionOrigin: `http://127.0.0.1:${ownDecisionPort}` };
      started.push(handle);
      await waitFor('gateway /readyz', async () => (await fetch(`${origin}/readyz`)).status === 200);
      return handle;
    };
    const startGateway = () => spawnGateway(options.gatewayEntry, configFile, gatewayPort, decisionPort);
    let gateway = await startGateway();

    const sign = (key: CryptoKey, kid: string, audience: string, claims: Record<string, unknown> = {}): Promise<string> => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ scope: 'mcp:tools', client_id: 'bench-client', jti: randomBytes(8).toString('base64url'), ...claims })
        .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
        .setIssuer(issuer)
        .setSubject('bench-user')
        .setAudience(audience)
        .setIssuedAt(now)
        .setExpirationTime(now + TOKEN_LIFETIME_S)
        .sign(key);
    };
    return {
      get gateway() {
        return gateway;
      },
      upstream: endpoint(upstream),
      calculator: endpoint(calculator),
      references,
      authority,
      async extraGateway(gatewayEntry, extraYaml) {
        const [port, ownDecisionPort] = [await freePort(), await freePort()];
        return spawnGateway(gatewayEntry, await writeConfig(`gateway-${port}.yaml`, port, ownDecisionPort, extraYaml), port, ownDecisionPort);
      },
      async restartGateway() {
        await gateway.stop();
        started.splice(started.indexOf(gateway), 1);
        gateway = await startGateway();
      },
      mint: (route, kind = 'valid') =>
        sign(kind === 'valid' ? privateKey : rogue.privateKey, kind === 'unknown-kid' ? UNKNOWN_KID : KID, gatewayOrigin + ROUTES[route]),
      mintBound: (route, jkt) => sign(privateKey, KID, gatewayOrigin + ROUTES[route], { cnf: { jkt } }),
      resourceOf: (route) => gatewayOrigin + ROUTES[route],
      async stop() {
        await Promise.all(started.reverse().map((process) => process.stop()));
        rmSync(workDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await Promise.all(started.map((process) => process.stop()));
    rmSync(workDir, { recursive: true, force: true });
    throw error;
  }
}
