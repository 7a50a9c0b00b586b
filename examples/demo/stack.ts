import { randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { assembleGateway } from '../../src/gateway/assemble.js';
import { devAuthServerOptionsFromConfig, startDevAuthServer, type DevAuthServer } from '../../src/authserver/index.js';
import { parseConfig } from '../../src/config/load.js';
import type { CompiledConfig } from '../../src/config/types.js';
import { createLogger } from '../../src/observability/logger.js';
import type { Gateway } from '../../src/gateway/build.js';
import { startCalculator, type Calculator } from '../calculator/server.js';
import { startNotes, type NotesServer } from '../notes/server.js';

export interface DemoPorts {
  readonly gateway: number;
  readonly authServer: number;
  readonly calculator: number;
  /** The notes server's own ("vendor") authorization server. */
  readonly vendorAuthServer: number;
  readonly notes: number;
}

/** The ports config/demo.yaml is written for. */
export const DEMO_PORTS: DemoPorts = { gateway: 8080, authServer: 9000, calculator: 3001, vendorAuthServer: 9100, notes: 3002 };

export interface DemoStack {
  readonly config: CompiledConfig;
  readonly gatewayUrl: string;
  readonly authServer: DevAuthServer;
  readonly calculator: Calculator;
  readonly vendorAuthServer: DevAuthServer;
  readonly notes: NotesServer;
  readonly gateway: Gateway;
  /** Where every component logs. */
  readonly logger: Logger;
  close(): Promise<void>;
}

/** A free loopback port (tests run the demo stack on free ports instead of the fixed demo ones). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function freeDemoPorts(): Promise<DemoPorts> {
  return {
    gateway: await freePort(),
    authServer: await freePort(),
    calculator: await freePort(),
    vendorAuthServer: await freePort(),
    notes: await freePort(),
  };
}

/** config/demo.yaml with its loopback ports moved, so the one shipped file also drives the tests. */
export async function demoConfig(ports: DemoPorts, env: NodeJS.ProcessEnv): Promise<CompiledConfig> {
  const text = (await readFile(new URL('../../config/demo.yaml', import.meta.url), 'utf8'))
    .replaceAll('127.0.0.1:8080', `127.0.0.1:${ports.gateway}`)
    .replace('port: 8080', `port: ${ports.gateway}`)
    .replaceAll('127.0.0.1:9000', `127.0.0.1:${ports.authServer}`)
    .replaceAll('127.0.0.1:3001', `127.0.0.1:${ports.calculator}`)
    .replaceAll('127.0.0.1:9100', `127.0.0.1:${ports.vendorAuthServer}`)
    .replaceAll('127.0.0.1:3002', `127.0.0.1:${ports.notes}`);
  const result = parseConfig(text, { env, source: 'config/demo.yaml' });
  if (!result.ok) {
    throw new Error(`config/demo.yaml: ${result.problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ')}`);
  }
  return result.config;
}

const secretFromEnv = (name: string) => process.env[name] ?? randomBytes(24).toString('base64url');

/** A JWK Set with one fresh ES256 private key: the gateway's authorization server signs with it for this run. */
async function signingKeySet(): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: randomBytes(8).toString('hex'), alg: 'ES256', use: 'sig' }] });
}

/** The secrets config/demo.yaml references: from the environment when set, else made up for this run. */
export async function demoSecrets(): Promise<NodeJS.ProcessEnv> {
  return {
    DEMO_INTROSPECTION_SECRET: secretFromEnv('DEMO_INTROSPECTION_SECRET'),
    DEMO_CONSENT_SECRET: secretFromEnv('DEMO_CONSENT_SECRET'),
    DEMO_NOTES_CLIENT_SECRET: secretFromEnv('DEMO_NOTES_CLIENT_SECRET'),
    DEMO_AS_SIGNING_KEYS: process.env.DEMO_AS_SIGNING_KEYS ?? (await signingKeySet()),
  };
}

/** The notes server's resource and its authorization server, as config/demo.yaml names them for the notes route. */
function notesUpstream(config: CompiledConfig): { readonly issuer: string; readonly resource: string } {
  const auth = config.routes.find((route) => route.name === 'notes')?.upstream.auth;
  if (auth?.type !== 'user_oauth' || auth.resource === undefined) throw new Error('config/demo.yaml: the notes route must use user_oauth with a resource');
  return { issuer: auth.issuer, resource: auth.resource };
}

export interface DemoStackOptions {
  /** Default: the ports config/demo.yaml is written for. */
  readonly ports?: DemoPorts;
  /** Default: JSON lines on stdout at config/demo.yaml's `log.level`. */
  readonly logger?: Logger;
  /**
   * Keeps each authorization server's signing key across restarts in the file named for its issuer (see
   * `startDevAuthServer`). Default: fresh keys.
   */
  readonly signingKeysFile?: (issuer: string) => string;
  /** Keeps each authorization server's registered clients across restarts in the file named for its issuer. */
  readonly clientsFile?: (issuer: string) => string;
}

/**
 * The whole MCP authorization flow on loopback: the development authorization server (auto-approving), the example
 * calculator behind the gateway twice, and the example notes server behind a user_oauth route with a second
 * development authorization server as its own ("vendor"); in-memory cache.
 */
export async function startDemoStack(options: DemoStackOptions = {}): Promise<DemoStack> {
  const ports = options.ports ?? DEMO_PORTS;
  const config = await demoConfig(ports, await demoSecrets());
  const vendor = notesUpstream(config);
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const keysOf = (issuer: string) => ({
    ...(options.signingKeysFile === undefined ? {} : { signingKeysFile: options.signingKeysFile(issuer) }),
    ...(options.clientsFile === undefined ? {} : { clientsFile: options.clientsFile(issuer) }),
  });
  // What has started so far, closed again when a later part cannot start (a port taken meanwhile, say).
  const started: { close(): Promise<unknown> }[] = [];
  const start = async <T extends { close(): Promise<unknown> }>(part: Promise<T>): Promise<T> => {
    const running = await part;
    started.push(running);
    return running;
  };
  try {
    const ownOptions = devAuthServerOptionsFromConfig(config, { autoApprove: true });
    const authServer = await start(startDevAuthServer({ ...ownOptions, ...keysOf(ownOptions.issuer), logger: logger.child({ component: 'dev-auth-server' }) }));
    const vendorOptions = devAuthServerOptionsFromConfig(config, { autoApprove: true, issuer: vendor.issuer });
    const vendorAuthServer = await start(
      startDevAuthServer({ ...vendorOptions, ...keysOf(vendorOptions.issuer), logger: logger.child({ component: 'vendor-auth-server' }) }),
    );
    const calculator = await start(startCalculator({ port: ports.calculator }));
    const notes = await start(startNotes({ port: ports.notes, issuer: vendorAuthServer.issuer, jwksUri: vendorAuthServer.jwksUri, resource: vendor.resource }));
    const gateway = assembleGateway(config, { logger });
    started.unshift(gateway);
    await gateway.app.listen({ host: config.listen.host, port: config.listen.port });
    await gateway.warm();
    return {
      config,
      gatewayUrl: config.publicUrl.href.replace(/\/$/, ''),
      authServer,
      calculator,
      vendorAuthServer,
      notes,
      gateway,
      logger,
      close: async () => {
        await gateway.close();
        await Promise.all([calculator.close(), notes.close(), authServer.close(), vendorAuthServer.close()]);
      },
    };
  } catch (error) {
    await Promise.allSettled(started.map((part) => part.close()));
    throw error;
  }
}

/** How often `startDemoStackOnFreePorts` picks fresh ports when one was taken between finding and binding it. */
const FREE_PORT_ATTEMPTS = 3;

/**
 * The demo stack on ports found free just before (tests, test:clients): another process running in parallel can
 * take one of them between `freeDemoPorts` and the bind, so a taken port means fresh ports and another try.
 */
export async function startDemoStackOnFreePorts(options: Omit<DemoStackOptions, 'ports'> = {}): Promise<DemoStack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDemoStack({ ...options, ports: await freeDemoPorts() });
    } catch (error) {
      if (attempt >= FREE_PORT_ATTEMPTS || (error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
    }
  }
}
