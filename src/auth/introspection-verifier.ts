import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { introspectionCacheKeys } from '../cache/cache-keys.js';
import { createValueSealer, type ValueSealer } from '../cache/sealed-value.js';
import type { CacheStore } from '../cache/store.js';
import type { IntrospectionSettings } from '../config/types.js';
import { GatewayError } from '../decision/index.js';
import { perConnection, perObject } from '../lib/memo.js';
import type { AuthCounters } from '../observability/auth-counters.js';
import { createFairBulkhead, type BulkheadRefusal } from './fair-bulkhead.js';
import { createIntrospectionClient, type IntrospectionFailure } from './introspection-client.js';
import {
  callerOf,
  checkEntry,
  entryFromAnswer,
  parseEntry,
  serializeEntry,
  type AcceptedEntry,
  type EntryExpectations,
  type IntrospectionEntry,
} from './introspection-entry.js';
import type { AuthContext, TokenVerifier, VerifyRequest } from '../decision/index.js';
// RFC 6750 §2.1 b64token: anything else cannot be a bearer token and never reaches the AS.
import { B64TOKEN } from '../decision/index.js';

export interface IntrospectionVerifierDeps {
  /** Shared by every route and replica; entries are facts about a token, re-checked per route. */
  readonly store: CacheStore;
  /** HMAC key of cache keys. */
  readonly keySecret: Buffer;
  /** One must be a member of the answer's `aud`: the route's resource (or its jwt audience override). */
  readonly audiences: readonly string[];
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: () => number;
  readonly fetch?: typeof fetch;
  readonly counters?: AuthCounters;
  readonly logger?: Logger;
  /**
   * Most introspection requests in flight at once, a quarter of them for one client address; beyond →
   * auth_unavailable, so a flood of distinct tokens can neither hammer the AS nor starve other clients.
   */
  readonly maxConcurrent?: number;
}

type Failure = IntrospectionFailure | BulkheadRefusal;

const DEFAULT_MAX_CONCURRENT = 64;
/** Only bounds what may reach the AS; the header parser enforces the configured, smaller limit first. */
const MAX_TOKEN_LENGTH = 16 * 1024;
/**
 * With a shared (Redis) store, entries are also kept in process for at most this long, never past their own
 * expiry: a reused token then costs no Redis round trip per request. The revocation budget is unchanged,
 * since a local copy expires no later than the shared entry it came from; a shared entry deleted by hand is
 * still honoured here for up to this long.
 */
export const LOCAL_TTL_MS = 2_000;
const LOCAL_MAX_ENTRIES = 10_000;

interface LocalEntry {
  readonly entry: IntrospectionEntry;
  /** ms since the epoch: the earlier of the entry's own `until` and LOCAL_TTL_MS after it was stored here. */
  readonly until: number;
}

/** One operator log line per failure reason per interval, however many requests fail. */
const FAILURE_LOG_INTERVAL_MS = 10_000;
const FAILURE_MESSAGES: Partial<Record<Failure, string>> = {
  credentials_refused:
    'introspection endpoint refused the gateway client credentials (check tokens.introspection client_id, client_secret or private_key, auth_method); answering 503',
  bulkhead_full: 'too many introspection requests in flight; answering 503',
  client_share_full: 'one client address holds its share of introspection requests in flight (unknown tokens?); answering 503 to it',
};

/**
 * RFC 7662 token verification behind a cache (the shared store, with a short-lived in-process tier in front of
 * Redis): a cached answer (positive or negative) is re-checked for this
 * verifier's audience and issuer and the clock; a miss costs one introspection per token per process however many
 * requests wait for it, and at most `maxConcurrent` introspections run at once, a fair share of them per client
 * address (fair-bulkhead.ts). Any failure to get a well-formed answer is `auth_unavailable` and is never cached.
 */
export function createIntrospectionVerifier(
  settings: IntrospectionSettings,
  deps: IntrospectionVerifierDeps,
): TokenVerifier {
  const now = deps.now ?? Date.now;
  const requestIntrospection = createIntrospectionClient(settings, { fetch: deps.fetch ?? globalThis.fetch, now });
  const bulkhead = createFairBulkhead({ capacity: deps.maxConcurrent ?? DEFAULT_MAX_CONCURRENT, maxWaitMs: settings.timeout });
  const cacheKeyOf = perConnection(introspectionCacheKeys(settings.issuer ?? settings.endpoint.href, deps.keySecret));
  const log = deps.logger?.child({ component: 'introspection', endpoint: settings.endpoint.origin });
  const logFailure = failureLogger(log, now);
  const inFlight = new Map<string, Promise<IntrospectionEntry>>();
  /** Flights finished so far, of any key: tells a lookup that missed whether an answer may have landed meanwhile. */
  let flightsLanded = 0;
  // A busy token's entry comes back as the same object from the local tier: so does its caller, which lets the
  // per-caller memos (session owner, rate-limit key) hit on introspection routes as they do for JWTs.
  const callerFor = perObject((entry: AcceptedEntry) => callerOf(entry, settings.issuer ?? settings.endpoint.href));
  const expectations = (at: number): EntryExpectations => ({
    audiences: deps.audiences,
    issuer: settings.issuer,
    acceptMissingAudience: settings.acceptMissingAudience,
    acceptMissingIssuer: settings.acceptMissingIssuer,
    now: at,
    clockTolerance: settings.clockTolerance,
  });
  const shared = deps.store.status().backend === 'redis';
  // The in-memory store is already in process: a second tier in front of it would only double the memory.
  const local = shared ? new LRUCache<string, LocalEntry>({ max: LOCAL_MAX_ENTRIES }) : undefined;
  const codec = entryCodec(shared ? createValueSealer(deps.keySecret, 'introspection entry') : undefined);

  function keepLocally(key: string, entry: IntrospectionEntry): void {
    local?.set(key, { entry, until: Math.min(entry.until, now() + LOCAL_TTL_MS) });
  }

  async function cached(key: string): Promise<IntrospectionEntry | undefined> {
    const near = local?.get(key);
    if (near && near.until > now()) return near.entry;
    const raw = await deps.store.get(key);
    const entry = raw === undefined ? undefined : codec.decode(key, raw);
    if (!entry || entry.until <= now()) return undefined;
    keepLocally(key, entry);
    return entry;
  }

  async function introspect(token: string, clientAddress: string | undefined): Promise<IntrospectionEntry> {
    const slot = await bulkhead.acquire(clientAddress);
    if (typeof slot === 'string') return unavailable(slot);
    deps.counters?.asCall();
    try {
      const result = await requestIntrospection(token, AbortSignal.timeout(settings.timeout));
      if (result.outcome === 'failed') return unavailable(result.failure, result.status);
      return entryFromAnswer(result.outcome === 'active' ? result.claims : undefined, settings, now());
    } finally {
      slot.release();
    }
  }

  function unavailable(failure: Failure, status?: number): never {
    deps.counters?.asError(failure);
    logFailure(failure, status);
    throw new GatewayError('auth_unavailable', { reason: `introspection_${failure}` });
  }

  /** Resolves once the answer is also stored, so requests after it find it in the cache (here or on a replica). */
  async function introspectAndRemember(key: string, token: string, clientAddress: string | undefined): Promise<IntrospectionEntry> {
    const entry = await introspect(token, clientAddress);
    // Negative answers are bounded apart: a flood of garbage tokens must not evict the answers valid callers use.
    await deps.store.set(key, codec.encode(key, entry), entry.until - now(), { negative: !entry.active });
    keepLocally(key, entry);
    return entry;
  }

  /**
   * Single flight: the first miss introspects (in a slot of its client), every request for the same key meanwhile
   * shares its answer.
   */
  function introspectOnce(key: string, token: string, clientAddress: string | undefined): Promise<IntrospectionEntry> {
    const pending = inFlight.get(key);
    if (pending) return pending;
    const flight = introspectAndRemember(key, token, clientAddress).finally(() => {
      flightsLanded += 1;
      inFlight.delete(key);
    });
    inFlight.set(key, flight);
    return flight;
  }

  async function entryFor(token: string, { clientAddress, connection }: VerifyRequest): Promise<IntrospectionEntry> {
    const key = cacheKeyOf(token, connection);
    const pending = inFlight.get(key);
    const landedBefore = flightsLanded;
    let hit = pending ? undefined : await cached(key);
    // A lookup that missed (or timed out) while a flight for the same key landed would ask the authorization
    // server again: the answer that flight stored is looked up once more first.
    if (!pending && !hit && flightsLanded !== landedBefore && !inFlight.has(key)) hit = await cached(key);
    if (hit) {
      if (hit.active) deps.counters?.cacheHit();
      else deps.counters?.negativeHit();
      return hit;
    }
    deps.counters?.cacheMiss();
    return pending ?? introspectOnce(key, token, clientAddress);
  }

  return {
    async verify(token: string, request?: VerifyRequest): Promise<AuthContext> {
      if (token.length > MAX_TOKEN_LENGTH || !B64TOKEN.test(token)) {
        throw new GatewayError('invalid_token', { reason: 'malformed_token' });
      }
      const entry = await entryFor(token, request ?? {});
      checkEntry(entry, expectations(now()));
      return callerFor(entry);
    },
    isReady: () => true,
    warm: () => Promise.resolve(),
    // In-flight introspections finish on their own (bounded by the timeout): a config reload closes the old
    // verifier while its requests are still being decided.
    close: () => Promise.resolve(),
  };
}

interface EntryCodec {
  encode(key: string, entry: IntrospectionEntry): string;
  /** `undefined` (a miss) for anything this gateway did not write under this very key. */
  decode(key: string, raw: string): IntrospectionEntry | undefined;
}

/**
 * Stored form of entries. In a shared store (Redis) anyone who can write there could copy one caller's entry onto
 * another token's key, so entries are sealed with their key as associated data, like upstream tokens; the
 * in-process store is written by this process alone, so its entries stay plain JSON and hits skip the decryption.
 */
function entryCodec(sealer: ValueSealer | undefined): EntryCodec {
  if (!sealer) return { encode: (_key, entry) => serializeEntry(entry), decode: (_key, raw) => parseEntry(raw) };
  return {
    encode: (key, entry) => sealer.seal(key, serializeEntry(entry)),
    decode(key, raw) {
      const opened = sealer.open(key, raw);
      return opened === undefined ? undefined : parseEntry(opened);
    },
  };
}

/** Error lines for operators, at most one per reason per interval, with how many were folded into it. */
function failureLogger(log: Logger | undefined, now: () => number): (failure: Failure, status?: number) => void {
  const lastLogged = new Map<Failure, { at: number; suppressed: number }>();
  return (failure, status) => {
    if (!log) return;
    const last = lastLogged.get(failure);
    if (last && now() - last.at < FAILURE_LOG_INTERVAL_MS) {
      last.suppressed += 1;
      return;
    }
    lastLogged.set(failure, { at: now(), suppressed: 0 });
    const suppressed = last?.suppressed ?? 0;
    log.error({ failure, status, suppressed }, FAILURE_MESSAGES[failure] ?? 'introspection failed; answering 503');
  };
}
