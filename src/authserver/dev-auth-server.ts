import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Provider } from 'oidc-provider';
import type { Logger } from 'pino';
import { createAdapterFactory } from './client-adapter.js';
import { withPersistentClients } from './persistent-clients.js';
import { createInteractionHandler, isInteractionPath, requestPath } from './interactions.js';
import { createLoopbackClientResolver } from './loopback-client-resolver.js';
import { buildProviderConfiguration, CLOCK_TOLERANCE_SECONDS } from './provider-config.js';
import { isLoopbackHostname } from './redirect-uris.js';
import { registrationCors } from './registration-cors.js';
import { createResourceRegistry, defaultScopeFromResource } from './resources.js';
import { generateSigningKeys, loadOrCreateSigningKeys } from './signing-keys.js';
import type { DevAuthServer, DevAuthServerOptions } from './types.js';

/** The one account of the development server; every sign-in is this user. */
export const DEV_ACCOUNT_ID = 'demo-user';

const DEFAULT_ACCESS_TOKEN_TTL_SECONDS = 300;
const RFC8414_METADATA_PATH = '/.well-known/oauth-authorization-server';
const OIDC_METADATA_PATH = '/.well-known/openid-configuration';

/** oidc-provider events worth a log line; only the error code and its fixed description are logged. */
const CLIENT_ERROR_EVENTS = [
  'authorization.error',
  'grant.error',
  'registration_create.error',
  'introspection.error',
  'discovery.error',
  'jwks.error',
] as const;

/** Who signs in next (`demo-user` unless a test chooses), and every account that has signed in (findAccount). */
function signInAccounts(signInAs: (() => string) | undefined): { next: () => string; has: (id: string) => boolean } {
  const known = new Set([DEV_ACCOUNT_ID]);
  return {
    next: () => {
      const id = signInAs?.() ?? DEV_ACCOUNT_ID;
      known.add(id);
      return id;
    },
    has: (id) => known.has(id),
  };
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** The issuer is an origin: plain http only on loopback, no path (endpoints hang off the root). */
function normaliseIssuer(issuer: string): string {
  const url = new URL(issuer);
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new TypeError('issuer must be an origin (scheme, host, optional port) without path, query or fragment');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHostname(url.hostname))) {
    throw new TypeError('issuer must use https unless its host is loopback');
  }
  return url.origin;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

function logEvents(provider: Provider, logger: Logger): void {
  provider.on('server_error', (_ctx, err) => logger.error({ err }, 'authorization server error'));
  // Provider's typed overloads take one literal event name at a time; these share one listener shape.
  const emitter: EventEmitter = provider;
  for (const event of CLIENT_ERROR_EVENTS) {
    emitter.on(event, (_ctx: unknown, err: { error?: unknown; error_description?: unknown }) =>
      logger.info({ event, error: err.error, description: err.error_description }, 'authorization request refused'),
    );
  }
}

/**
 * Starts the development OAuth 2.1 authorization server (oidc-provider) for the demo and the tests. It issues
 * tokens only for the configured resources, requires PKCE S256 and resource indicators, and accepts pre-registered
 * clients, dynamic registration and Client ID Metadata Documents. State is in memory; the signing key is
 * regenerated at every start unless `signingKeysFile` keeps it.
 */
export async function startDevAuthServer(options: DevAuthServerOptions): Promise<DevAuthServer> {
  const host = options.host ?? '127.0.0.1';
  const resources = createResourceRegistry(options.resources);
  const accounts = signInAccounts(options.signInAs);
  const jwks = options.signingKeysFile === undefined ? await generateSigningKeys() : await loadOrCreateSigningKeys(options.signingKeysFile);
  const resolveLoopbackClient = options.allowLoopbackClientMetadata ? createLoopbackClientResolver() : undefined;
  const memory = createAdapterFactory(CLOCK_TOLERANCE_SECONDS, resolveLoopbackClient);
  const adapter = options.clientsFile === undefined ? memory : await withPersistentClients(memory, options.clientsFile);
  const server = createServer();
  await listen(server, options.port ?? 0, host);

  let provider: Provider;
  let url: string;
  let issuer: string;
  try {
    url = `http://${urlHost(host)}:${(server.address() as AddressInfo).port}`;
    issuer = normaliseIssuer(options.issuer ?? url);
    provider = new Provider(
      issuer,
      buildProviderConfiguration({
        resources,
        clients: options.clients ?? [],
        jwks,
        cookieKeys: [randomBytes(32).toString('base64url')],
        adapter,
        isAccount: accounts.has,
        ...(options.accountClaims ? { accountClaims: options.accountClaims } : {}),
        accessTokenTtlSeconds: options.accessTokenTtlSeconds ?? DEFAULT_ACCESS_TOKEN_TTL_SECONDS,
        issueRefreshTokens: options.issueRefreshTokens ?? true,
      }),
    );
  } catch (error) {
    await closeServer(server);
    throw error;
  }
  // An https issuer means TLS ends at a proxy in front: trust its X-Forwarded-Proto for secure cookies.
  provider.proxy = issuer.startsWith('https:');
  provider.use(registrationCors(provider.pathFor('registration')));
  provider.use(defaultScopeFromResource(resources, provider.pathFor('authorization')));
  if (options.logger) logEvents(provider, options.logger);

  const interactions = createInteractionHandler({
    provider,
    origin: issuer,
    accountId: accounts.next,
    autoApprove: options.autoApprove ?? false,
    logger: options.logger,
  });
  const oidc = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = requestPath(req);
    if (isInteractionPath(path)) {
      void interactions(req, res);
      return;
    }
    // RFC 8414 metadata is the same document oidc-provider serves for OpenID Connect Discovery.
    if (path === RFC8414_METADATA_PATH) req.url = `${OIDC_METADATA_PATH}${(req.url ?? '').slice(path.length)}`;
    void oidc(req, res);
  });

  const warning = `DEVELOPMENT AUTHORIZATION SERVER at ${issuer}: every sign-in is "${DEV_ACCOUNT_ID}"${
    options.autoApprove ? ' and every request is approved without asking' : ''
  }, state is in memory${options.clientsFile === undefined ? '' : ' (registered clients are kept in a file)'}${
    options.signingKeysFile === undefined ? ', keys change at every start' : ''
  }. Never expose it or use it for real accounts.`;
  if (options.logger) options.logger.warn(warning);
  else process.emitWarning(warning, 'DevAuthServerWarning');

  let closing: Promise<void> | undefined;
  return {
    url,
    issuer,
    jwksUri: `${issuer}/jwks`,
    introspectionEndpoint: `${issuer}/token/introspection`,
    close: () => (closing ??= closeServer(server)),
  };
}
