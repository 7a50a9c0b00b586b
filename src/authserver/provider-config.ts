import {
  errors,
  interactionPolicy,
  type AdapterFactory,
  type AsymmetricSigningAlgorithm,
  type ClientMetadata,
  type Configuration,
  type JWKS,
  type KoaContextWithOIDC,
  type ResourceServer,
} from 'oidc-provider';
import { CLIENT_METADATA_DOCUMENT_LIMITS, hasRequiredDocumentFields } from './client-metadata-document.js';
import { PAGE_HEADERS, renderErrorPage } from './pages.js';
import { isAllowedRedirectUri } from './redirect-uris.js';
import type { ResourceRegistry } from './resources.js';
import type { DevClient } from './types.js';

export interface ProviderSettings {
  readonly resources: ResourceRegistry;
  readonly clients: readonly DevClient[];
  readonly jwks: JWKS;
  readonly cookieKeys: readonly string[];
  readonly adapter: AdapterFactory;
  /** Accounts that exist: those the interactions signed in. */
  readonly isAccount: (id: string) => boolean;
  /** Claims of an account besides `sub` (an IdP's `email`, `groups`), put in its ID tokens. Default: none. */
  readonly accountClaims?: (id: string) => Readonly<Record<string, unknown>>;
  readonly accessTokenTtlSeconds: number;
  readonly issueRefreshTokens: boolean;
  /** RFC 7591 `application_type` as registered (`native`: loopback redirect URIs on any port). Default: every client is `web`. */
  readonly honourApplicationType?: boolean;
  /** Signs access and ID tokens: the first signing key's `alg`. Default: ES256. */
  readonly signingAlg?: AsymmetricSigningAlgorithm;
}

/** Seconds oidc-provider tolerates between its clock and a client's (also used by the memory adapter). */
export const CLOCK_TOLERANCE_SECONDS = 15;

const DEFAULT_SIGNING_ALG: AsymmetricSigningAlgorithm = 'ES256';
const CODE_GRANTS = ['authorization_code', 'refresh_token'];
/**
 * What a registered client that names no grant types gets: no refresh tokens. Clients that refresh register for
 * `refresh_token`; one that does not and is handed a refresh token anyway answers a step-up 403 with a refresh,
 * which cannot add the scope it lacks.
 */
const DEFAULT_GRANTS = ['authorization_code'];

function toClientMetadata(client: DevClient): ClientMetadata {
  const redirectUris = client.redirect_uris ?? [];
  const grantTypes = client.grant_types ?? (redirectUris.length > 0 ? CODE_GRANTS : []);
  return {
    client_id: client.client_id,
    ...(client.client_secret === undefined ? {} : { client_secret: client.client_secret }),
    ...(client.client_name === undefined ? {} : { client_name: client.client_name }),
    redirect_uris: [...redirectUris],
    grant_types: [...grantTypes],
    response_types: grantTypes.includes('authorization_code') ? ['code'] : [],
    token_endpoint_auth_method:
      client.token_endpoint_auth_method ?? (client.client_secret === undefined ? 'none' : 'client_secret_basic'),
  };
}

function originOf(uri: string): string | undefined {
  try {
    return new URL(uri).origin;
  } catch {
    return undefined;
  }
}

/** RFC 7591 §2 URIs shown to people, never used in the protocol. */
const INFORMATIONAL_URIS = ['client_uri', 'logo_uri', 'policy_uri', 'tos_uri'] as const;

/**
 * Runs for every client however it arrives (pre-registered, registration request, metadata document).
 * Redirect URIs must be https or loopback http. Unless `honourApplicationType`, every client is treated as `web`,
 * so redirect URIs are matched exactly; a `native` client's loopback redirect URIs match on any port (RFC 8252
 * §7.3, oidc-provider's rule).
 */
const clientMetadataValidator = (honourApplicationType: boolean) => (_ctx: unknown, key: string, value: unknown, metadata: ClientMetadata): void => {
  // Some client libraries send an empty string for the informational URIs they were not given: that is "none".
  for (const uri of INFORMATIONAL_URIS) if (metadata[uri] === '') delete metadata[uri];
  // MCP clients register with the challenge's scope; oidc-provider would pin the client to it (and reject resource
  // scopes it does not list globally). What a client may get is decided per resource instead, so step-up works.
  if (key === 'scope') {
    delete metadata.scope;
    return;
  }
  if (key !== 'redirect_uris' || !Array.isArray(value)) return;
  if (!value.every((uri) => typeof uri === 'string' && isAllowedRedirectUri(uri))) {
    throw new errors.InvalidClientMetadata('redirect_uris must be https or loopback http URIs without fragment');
  }
  if (!honourApplicationType) metadata.application_type = 'web';
};

/** OpenID Connect scopes: a request with only these signs a person in and asks for no resource. */
const OIDC_SCOPES: ReadonlySet<string> = new Set(['openid', 'offline_access', 'email', 'profile']);

function isSignInOnly(scope: unknown): boolean {
  if (typeof scope !== 'string') return false;
  const scopes = scope.split(' ').filter(Boolean);
  return scopes.includes('openid') && scopes.every((item) => OIDC_SCOPES.has(item));
}

/** Every authorization asks the user (or autoApprove) to confirm, even when an earlier grant covers the scopes. */
function interactionPolicyWithConsentAlways(): interactionPolicy.Prompt[] {
  const policy = interactionPolicy.base();
  policy.get('consent')?.checks.add(
    new interactionPolicy.Check(
      'consent_every_request',
      'every authorization request is confirmed by the End-User',
      'consent_required',
      (ctx) => (ctx.oidc.result?.consent ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT),
    ),
  );
  return policy;
}

export function buildProviderConfiguration(settings: ProviderSettings): Configuration {
  const { resources, accessTokenTtlSeconds } = settings;
  const signingAlg = settings.signingAlg ?? DEFAULT_SIGNING_ALG;

  // RFC 8707 is mandatory here: no resource → invalid_target, at the authorization and at the token endpoint. A
  // sign-in (OpenID Connect scopes only: the gateway's consent pages) asks for no access to any resource.
  function defaultResource(ctx: KoaContextWithOIDC, _client: unknown, oneOf?: readonly string[]): Promise<string | undefined> {
    if (oneOf === undefined && isSignInOnly(ctx.oidc.params?.scope)) return Promise.resolve(undefined);
    const reason = oneOf ? 'exactly one resource indicator must be used' : 'the resource parameter is required';
    return Promise.reject(new errors.InvalidTarget(reason));
  }

  function getResourceServerInfo(ctx: KoaContextWithOIDC, indicator: string): Promise<ResourceServer> {
    // oidc-provider falls back to the grant's resource when a token request omits it; the MCP spec wants it sent.
    if (ctx.oidc.route === 'token' && ctx.oidc.params?.resource === undefined) {
      return Promise.reject(new errors.InvalidTarget('the resource parameter is required'));
    }
    const resource = resources.find(indicator);
    if (resource === undefined) return Promise.reject(new errors.InvalidTarget('resource indicator is not a configured resource'));
    const format = resource.accessTokenFormat ?? 'jwt';
    return Promise.resolve({
      scope: resource.scopes.join(' '),
      audience: resource.resource,
      accessTokenTTL: accessTokenTtlSeconds,
      accessTokenFormat: format,
      ...(format === 'jwt' ? { jwt: { sign: { alg: signingAlg } } } : {}),
    });
  }

  return {
    adapter: settings.adapter,
    clients: settings.clients.map(toClientMetadata),
    clientDefaults: {
      grant_types: DEFAULT_GRANTS,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: signingAlg,
    },
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris?.some((uri) => originOf(uri) === origin) ?? false,
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    cookies: { keys: [...settings.cookieKeys] },
    jwks: settings.jwks,
    enabledJWA: { idTokenSigningAlgValues: [signingAlg] },
    responseTypes: ['code'],
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    scopes: [...OIDC_SCOPES],
    // An organisation's IdP puts what it knows of the person in the ID token (the gateway decides entitlements
    // from it); `openid` releases them all: the development server has no claim-by-claim consent.
    claims: { openid: ['sub', 'email', 'name', 'groups'] },
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) =>
      settings.isAccount(id) ? { accountId: id, claims: () => ({ ...settings.accountClaims?.(id), sub: id }) } : undefined,
    interactions: {
      url: (_ctx, interaction) => `/interaction/${interaction.uid}`,
      policy: interactionPolicyWithConsentAlways(),
    },
    extraClientMetadata: { properties: ['redirect_uris', 'scope'], validator: clientMetadataValidator(settings.honourApplicationType ?? false) },
    features: {
      devInteractions: { enabled: false },
      dPoP: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: false },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      introspection: { enabled: true, allowedPolicy: (_ctx, client) => client.clientAuthMethod !== 'none' },
      // RFC 7009: the gateway revokes a user's grant here when the user or an operator disconnects it; a client
      // may revoke only tokens issued to it.
      revocation: { enabled: true, allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId },
      resourceIndicators: {
        enabled: true,
        defaultResource,
        getResourceServerInfo,
        useGrantedResource: () => false,
      },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        allowClient: (_ctx, client) =>
          hasRequiredDocumentFields({ client_name: client.clientName, redirect_uris: client.redirectUris }),
        cacheDuration: { ...CLIENT_METADATA_DOCUMENT_LIMITS.cacheSeconds },
      },
    },
    fetchResponseBodyLimits: { 'client_id metadata document': CLIENT_METADATA_DOCUMENT_LIMITS.maxBytes },
    issueRefreshToken: (_ctx, client) => settings.issueRefreshTokens && client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // Tokens outlive the browser session: the demo user's session is not a security boundary here.
    expiresWithSession: () => false,
    ttl: {
      AccessToken: accessTokenTtlSeconds,
      AuthorizationCode: 60,
      IdToken: accessTokenTtlSeconds,
      Interaction: 600,
      Grant: 86_400,
      RefreshToken: 86_400,
      Session: 86_400,
    },
    renderError: (ctx, out) => {
      ctx.status = ctx.status >= 400 ? ctx.status : 400;
      ctx.set({ ...PAGE_HEADERS });
      ctx.body = renderErrorPage(String(out.error), out.error_description === undefined ? undefined : String(out.error_description));
    },
  };
}
