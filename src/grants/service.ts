import type { Logger } from 'pino';
import type { CacheStore } from '../cache/store.js';
import type { CompiledConfig } from '../config/types.js';
import { createAuthorizationCodeFlow } from './authorization-code-client.js';
import { createUserGrants } from './user-oauth.js';
import { grantAudit } from './audit.js';
import { createConsentPages, displayName, type ConsentPages, type ConsentRoute } from './consent-pages.js';
import { createConsentFlows } from './flows.js';
import { createGrantStore, type GrantStore } from './grant-store.js';
import { createConsentLinks } from './links.js';
import { createOidcLogin } from './oidc-login.js';
import { createSignInSealer } from './sign-in.js';

/** Everything user_oauth needs for one compiled config: the routes' grants and the consent pages. */
export interface ConsentRuntime {
  readonly pages: ConsentPages;
  /** By route name. */
  readonly routes: ReadonlyMap<string, ConsentRoute>;
  readonly grants: GrantStore;
}

export interface ConsentServices {
  /** Grants, links and flows live here (Redis across replicas). */
  readonly store: CacheStore;
  /** Keys every consent record (HMAC) and, derived per purpose, seals it (AES-256-GCM). */
  readonly keySecret: Buffer;
  /** Grant audit lines. */
  readonly logger?: Logger;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

/** `undefined` when no route uses user_oauth (the config then has no consent section). */
export function createConsentRuntime(config: CompiledConfig, services: ConsentServices): ConsentRuntime | undefined {
  const { consent } = config;
  if (!consent) return undefined;
  const now = services.now ?? Date.now;
  const publicUrl = config.publicUrl.href.replace(/\/$/, '');
  const grants = createGrantStore(services.store, services.keySecret);
  const links = createConsentLinks(services.store, services.keySecret, { publicUrl, ttlMs: consent.linkTtl, now });
  const audit = grantAudit(services.logger);
  const deps = { fetch: services.fetch, now };

  const routes = new Map<string, ConsentRoute>();
  for (const route of config.routes) {
    const { auth } = route.upstream;
    if (auth.type !== 'user_oauth') continue;
    const vendor = createAuthorizationCodeFlow(auth, { resource: auth.resource }, deps);
    const message = `Connect ${displayName(route)}: sign in and allow the gateway to use your account at ${new URL(auth.issuer).host}`;
    routes.set(route.name, { route, grants: createUserGrants(route.name, auth, { grants, links, vendor, audit, message, now }) });
  }

  const login = createOidcLogin(
    createAuthorizationCodeFlow(consent.login, { resource: undefined }, deps),
    consent.login.clientId,
    consent.login.timeout,
  );
  const flows = createConsentFlows(services.store, services.keySecret);
  const signIns = createSignInSealer(services.keySecret);
  const pages = createConsentPages({ publicUrl, login, flows, signIns, links, grants, routes, flowTtl: consent.linkTtl, audit, now });
  return { pages, routes, grants };
}
