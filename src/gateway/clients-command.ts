import type { Logger } from 'pino';
import { createGatewayAuthorizationServer } from '../authserver/gateway-authorization-server.js';
import type { RedisStore } from '../cache/redis-store.js';
import { loadConfigOrExit } from '../config/cli.js';
import type { CompiledConfig } from '../config/types.js';
import { createLogger } from '../observability/logger.js';
import { createCacheStore, resolveCacheKeySecret } from './cache-store.js';

/** How long `clients` waits for Redis before giving up. */
const REDIS_CONNECT_MS = 5_000;
/** An operator command may wait longer on Redis than a request would. */
const COMMAND_TIMEOUT_MS = 2_000;
/** Most consents one listing reads. */
const LISTING_LIMIT = 10_000;

export interface ConsentFilter {
  /** The person: their subject at the sign-in IdP. */
  readonly subject?: string;
  readonly client?: string;
}

type Result = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly problem: string };

/**
 * `mcp-auth-gateway clients list|revoke` (its output as the value): the consents people gave MCP clients at the
 * gateway's authorization server, in the config's Redis. Revoking one withdraws the consent: its grant and every
 * access and refresh token of it stop working, and the person is asked again next time.
 */
export async function runClientsCommand(config: CompiledConfig, action: 'list' | 'revoke', filter: ConsentFilter, logger: Logger): Promise<Result> {
  if (!config.authorizationServer) return { ok: false, problem: 'the config has no authorization_server section' };
  if (config.cache.redis === undefined && config.cache.redisUrl === undefined) {
    return { ok: false, problem: 'the config has no Redis cache: consents live inside each gateway process and cannot be reached from here' };
  }
  if (action === 'revoke' && filter.subject === undefined && filter.client === undefined) {
    return { ok: false, problem: 'revoke needs --subject or --client (or both)' };
  }
  const store = createCacheStore({ ...config.cache }, logger, { commandTimeoutMs: COMMAND_TIMEOUT_MS }) as RedisStore;
  try {
    if (!(await store.whenReady(REDIS_CONNECT_MS))) return { ok: false, problem: 'Redis did not answer' };
    const server = createGatewayAuthorizationServer(config, { store, keySecret: resolveCacheKeySecret(config.cache), logger });
    const consents = await server?.listConsents(LISTING_LIMIT);
    if (!server || consents === undefined) return { ok: false, problem: 'Redis did not answer' };
    const matching = consents.filter(
      (consent) => (filter.subject === undefined || consent.accountId === filter.subject) && (filter.client === undefined || consent.clientId === filter.client),
    );
    if (action === 'list') {
      const rows = [['CLIENT', 'SUBJECT', 'SINCE'], ...matching.map((consent) => [consent.clientId, consent.accountId, consent.since])];
      return { ok: true, value: rows.map((row) => `${row.join('\t')}\n`).join('') };
    }
    let revoked = 0;
    for (const consent of matching) if (await server.withdrawConsent(consent.accountId, consent.clientId, 'operator')) revoked += 1;
    return { ok: true, value: `revoked ${revoked} consent(s)\n` };
  } finally {
    await store.close();
  }
}

/** `clients list|revoke --config FILE [--subject S] [--client C]`: listing on stdout, audit lines on stderr. */
export async function clientsCommand(action: string | undefined, file: string | undefined, filter: ConsentFilter): Promise<number> {
  if (action !== 'list' && action !== 'revoke') {
    process.stderr.write('clients needs list or revoke: mcp-auth-gateway clients list|revoke --config FILE [--subject S] [--client C]\n');
    return 2;
  }
  if (!file) {
    process.stderr.write(`clients ${action} needs --config FILE\n`);
    return 2;
  }
  const config = await loadConfigOrExit(file);
  const logger = createLogger({ level: config.logLevel, destination: process.stderr });
  const result = await runClientsCommand(config, action, filter, logger);
  if (!result.ok) {
    process.stderr.write(`clients ${action}: ${result.problem}\n`);
    return 1;
  }
  process.stdout.write(result.value);
  return 0;
}
