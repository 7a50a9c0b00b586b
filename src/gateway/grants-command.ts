import { loadConfigOrExit } from '../config/cli.js';
import { createLogger } from '../observability/logger.js';
import type { Logger } from 'pino';
import { resolveCacheKeySecret } from './cache-store.js';
import { createCacheStore } from './cache-store.js';
import type { RedisStore } from '../cache/redis-store.js';
import type { CompiledConfig } from '../config/types.js';
import { listGrants, revokeGrants, type GrantCommandResult, type GrantFilter, type GrantListing } from '../grants/operator.js';
import { createConsentRuntime } from '../grants/service.js';

/** How long `grants` waits for Redis before giving up. */
const REDIS_CONNECT_MS = 5_000;
/** An operator command may wait longer on Redis than a request would. */
const COMMAND_TIMEOUT_MS = 2_000;

function table(grants: readonly GrantListing[]): string {
  const rows = grants.map((grant) => [
    grant.route,
    grant.issuer,
    grant.subject,
    grant.principal,
    grant.scopes.join(' ') || '-',
    grant.grantedAt,
    grant.expiresAt ?? '-',
    grant.refreshable ? 'yes' : 'no',
  ]);
  const header = ['ROUTE', 'ISSUER', 'SUBJECT', 'PRINCIPAL', 'SCOPES', 'CONNECTED', 'EXPIRES', 'REFRESH'];
  return [header, ...rows].map((row) => `${row.join('\t')}\n`).join('');
}

/**
 * `mcp-auth-gateway grants list|revoke` (its output as the value): the grants of the config's user_oauth routes in its Redis, read with
 * the config's key secret. Only Redis holds grants an operator can reach (the in-process store lives in each
 * gateway).
 */
export async function runGrantCommand(
  config: CompiledConfig,
  action: 'list' | 'revoke',
  filter: GrantFilter,
  logger: Logger,
): Promise<GrantCommandResult<string>> {
  if (!config.consent) return { ok: false, problem: 'no route of this config uses upstream.auth.type user_oauth' };
  if (config.cache.redis === undefined && config.cache.redisUrl === undefined) {
    return { ok: false, problem: 'the config has no Redis cache: grants live inside each gateway process and cannot be reached from here' };
  }
  const store = createCacheStore({ ...config.cache }, logger, { commandTimeoutMs: COMMAND_TIMEOUT_MS }) as RedisStore;
  try {
    if (!(await store.whenReady(REDIS_CONNECT_MS))) return { ok: false, problem: 'Redis did not answer' };
    const consent = createConsentRuntime(config, { store, keySecret: resolveCacheKeySecret(config.cache), logger });
    if (!consent) return { ok: false, problem: 'no route of this config uses upstream.auth.type user_oauth' };
    if (action === 'list') {
      const listed = await listGrants(consent, filter);
      return listed.ok ? { ok: true, value: table(listed.value) } : listed;
    }
    const revoked = await revokeGrants(consent, filter);
    return revoked.ok ? { ok: true, value: `revoked ${revoked.value} grant(s)\n` } : revoked;
  } finally {
    await store.close();
  }
}

/** `grants list|revoke --config FILE [--route R] [--subject S]`: listing on stdout, audit lines on stderr. */
export async function grantsCommand(action: string | undefined, file: string | undefined, filter: GrantFilter): Promise<number> {
  if (action !== 'list' && action !== 'revoke') {
    process.stderr.write('grants needs list or revoke: mcp-auth-gateway grants list|revoke --config FILE [--route R] [--subject S]\n');
    return 2;
  }
  if (!file) {
    process.stderr.write(`grants ${action} needs --config FILE\n`);
    return 2;
  }
  const config = await loadConfigOrExit(file);
  // Audit lines (revocations) go to stderr; stdout is the listing.
  const logger = createLogger({ level: config.logLevel, destination: process.stderr });
  const result = await runGrantCommand(config, action, filter, logger);
  if (!result.ok) {
    process.stderr.write(`grants ${action}: ${result.problem}\n`);
    return 1;
  }
  process.stdout.write(result.value);
  return 0;
}
