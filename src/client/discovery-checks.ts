import type { AddressPolicy } from './address-policy.js';
import type { Check } from './check.js';
import { SPEC } from './check.js';
import { jwksUriOf, type AuthorizationServerFound, type Discovery, type ResourceMetadataSource, type TriedUrl } from './discovery.js';
import { canonicalResource, isSecureOrLoopback, matchResource } from './resource-identifier.js';

const SOURCE_NAMES: Record<ResourceMetadataSource, string> = {
  header: "the challenge's resource_metadata URL",
  path: 'path shape A',
  root: 'the root (shape B)',
};

function triedList(tried: readonly TriedUrl[]): string {
  return tried.map((entry) => `${entry.url} (${entry.outcome})`).join(', ');
}

function resourceCheck(resource: string, url: URL): Check {
  const expected = canonicalResource(url);
  switch (matchResource(resource, url)) {
    case 'same':
      return { id: 'resource', status: 'pass', message: `resource is ${resource}`, spec: SPEC.prmResource };
    case 'prefix':
      return {
        id: 'resource',
        status: 'fail',
        message:
          `resource ${resource} is not ${expected} but a prefix of it: RFC 9728 §3.3 requires the two to be identical, ` +
          `and strict clients reject the metadata; the official SDK tolerates a same-origin prefix and requests tokens ` +
          `for ${resource}, valid wherever that prefix is`,
        spec: SPEC.prmResource,
      };
    case 'different':
      return {
        id: 'resource',
        status: 'fail',
        message: `resource ${resource} does not identify ${expected}: clients must not use this metadata`,
        spec: SPEC.prmResource,
      };
  }
}

/**
 * Whether the metadata's `resource` is a same-origin path prefix of the URL: `probe` fails it (RFC 9728 §3.3), and
 * `login` accepts it as the official SDK does, so that it signs in wherever SDK clients do.
 */
export function isPrefixResource(discovery: Discovery): boolean {
  const resource = discovery.resourceMetadata?.document.resource;
  return resource !== undefined && matchResource(resource, discovery.url) === 'prefix';
}

/** Step 2: protected resource metadata, where it was found, and what it says. */
export function resourceMetadataChecks(discovery: Discovery): Check[] {
  const { resourceMetadata: found, resourceMetadataTried: tried, url } = discovery;
  if (found === undefined) {
    return [
      {
        id: 'resource-metadata',
        status: 'fail',
        message:
          `no protected resource metadata: ${triedList(tried)}; ` +
          `2025-03-26 clients fall back to ${new URL('/', url).href} as the authorization server`,
        spec: SPEC.prmDiscovery,
      },
    ];
  }
  const failedFirst = tried.length > 0 ? `, after ${triedList(tried)}` : '';
  const servers = found.document.authorization_servers ?? [];
  const scopes = found.document.scopes_supported;
  return [
    {
      id: 'resource-metadata',
      status: found.source === 'header' || tried.length === 0 ? 'pass' : 'warn',
      message: `found at ${found.url}, ${SOURCE_NAMES[found.source]}${failedFirst}`,
      spec: SPEC.prmDiscovery,
    },
    resourceCheck(found.document.resource, url),
    servers.length > 0
      ? { id: 'authorization-servers', status: 'pass', message: servers.join(', '), spec: SPEC.prmAuthorizationServers }
      : {
          id: 'authorization-servers',
          status: 'fail',
          message: 'authorization_servers is missing or empty: a client has nowhere to authorize',
          spec: SPEC.prmAuthorizationServers,
        },
    scopes?.includes('offline_access')
      ? {
          id: 'scopes-supported',
          status: 'warn',
          message: 'scopes_supported lists offline_access, which belongs to the authorization server, not to the resource',
          spec: SPEC.offlineAccess,
        }
      : {
          id: 'scopes-supported',
          status: 'pass',
          message: scopes === undefined ? 'scopes_supported is not listed' : `scopes_supported: ${scopes.join(' ')}`,
          spec: SPEC.offlineAccess,
        },
  ];
}

function metadataCheck(found: AuthorizationServerFound, legacy: boolean): Check {
  if (found.metadata !== undefined) {
    const kind = found.metadataUrl?.includes('/.well-known/openid-configuration') ? 'OpenID Connect discovery' : 'RFC 8414 metadata';
    return { id: 'as-metadata', status: 'pass', message: `${found.server}: ${kind} at ${found.metadataUrl ?? '?'}`, spec: SPEC.asMetadata };
  }
  return {
    id: 'as-metadata',
    status: legacy ? 'warn' : 'fail',
    message:
      `${found.server}: no metadata at ${triedList(found.tried)}` +
      (legacy ? '; 2025-03-26 clients use /authorize, /token and /register at this origin' : ''),
    spec: SPEC.asMetadata,
  };
}

function issuerCheck(found: AuthorizationServerFound, issuer: string, legacy: boolean): Check {
  if (issuer === found.server) {
    return { id: 'as-issuer', status: 'pass', message: `issuer is ${issuer}`, spec: SPEC.asIssuer };
  }
  return {
    id: 'as-issuer',
    status: legacy ? 'warn' : 'fail',
    message: legacy
      ? `issuer ${issuer} is not the server's origin ${found.server} (2025-03-26 discovery does not compare them)`
      : `issuer ${issuer} is not ${found.server} as advertised: strict clients reject the metadata (RFC 8414 §3.3)`,
    spec: SPEC.asIssuer,
  };
}

function pkceCheck(found: AuthorizationServerFound): Check {
  const methods = found.metadata?.code_challenge_methods_supported;
  if (found.metadata === undefined) {
    return { id: 'as-pkce', status: 'warn', message: `${found.server}: PKCE support cannot be verified without metadata`, spec: SPEC.pkce };
  }
  if (methods === undefined) {
    return {
      id: 'as-pkce',
      status: 'fail',
      message: 'code_challenge_methods_supported is missing: clients must refuse to proceed',
      spec: SPEC.pkce,
    };
  }
  return methods.includes('S256')
    ? { id: 'as-pkce', status: 'pass', message: `code_challenge_methods_supported: ${methods.join(' ')}`, spec: SPEC.pkce }
    : {
        id: 'as-pkce',
        status: 'fail',
        message: `code_challenge_methods_supported (${methods.join(' ') || 'empty'}) lacks S256: clients must refuse to proceed`,
        spec: SPEC.pkce,
      };
}

/** The server and every endpoint a client would call or send a browser to, each once. */
function clientEndpoints(found: AuthorizationServerFound): string[] {
  const metadata = found.metadata;
  const urls = [
    found.server,
    metadata?.authorization_endpoint,
    metadata?.token_endpoint,
    metadata?.registration_endpoint,
    jwksUriOf(metadata),
  ].filter((url): url is string => url !== undefined);
  return [...new Set(urls)];
}

/** https, or http on loopback only. */
function httpsCheck(found: AuthorizationServerFound): Check {
  const insecure = clientEndpoints(found).filter((url) => !isSecureOrLoopback(url));
  return insecure.length === 0
    ? { id: 'as-https', status: 'pass', message: `${found.server}: https or loopback throughout`, spec: SPEC.https }
    : { id: 'as-https', status: 'fail', message: `not https (and not loopback): ${insecure.join(', ')}`, spec: SPEC.https };
}

/**
 * Endpoints the address policy refuses (address-policy.ts), named by the metadata: reported only when there are
 * some. Requests to them would be refused anyway; this also keeps a browser from being sent there.
 */
function addressCheck(found: AuthorizationServerFound, addresses: AddressPolicy): Check[] {
  const refusals = clientEndpoints(found).flatMap((url) => (URL.canParse(url) ? (addresses.refusal(url) ?? []) : []));
  return refusals.length === 0 ? [] : [{ id: 'as-addresses', status: 'fail', message: [...new Set(refusals)].join('; '), spec: SPEC.addresses }];
}

/**
 * Step 3 for one authorization server: its metadata, `issuer` exactly as advertised, PKCE S256, and https. A
 * client uses the first server whose checks have no failure (`usableAuthorizationServer`).
 */
export function authorizationServerChecks(found: AuthorizationServerFound, discovery: Pick<Discovery, 'legacy' | 'addresses'>): Check[] {
  const { legacy } = discovery;
  const checks = [metadataCheck(found, legacy)];
  if (found.metadata !== undefined) checks.push(issuerCheck(found, found.metadata.issuer, legacy));
  if (found.metadata !== undefined || legacy) checks.push(pkceCheck(found));
  checks.push(httpsCheck(found), ...addressCheck(found, discovery.addresses));
  return checks;
}

/** The first authorization server, in the metadata's order, that a spec client may use. */
export function usableAuthorizationServer(discovery: Discovery): AuthorizationServerFound | undefined {
  return discovery.authorizationServers.find((found) => authorizationServerChecks(found, discovery).every((check) => check.status !== 'fail'));
}
