import { registerClient } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isLoopbackHost } from '../config/url.js';
import { startClientMetadataServer } from './client-metadata-server.js';
import type { AuthorizationServerFound } from './discovery.js';
import { describeRegistration, registrationApproaches, type Registration } from './registration.js';

export interface ClientIdentityOptions {
  /** `--client-id`, with `--client-secret-file`'s content when the client is confidential. */
  readonly clientId?: string;
  readonly clientSecret?: string;
  /** `--client-metadata-url`: this client's published Client ID Metadata Document (https). */
  readonly clientMetadataUrl?: string;
  readonly redirectUri: string;
  readonly fetch: FetchLike;
}

export interface ClientIdentity {
  readonly information: OAuthClientInformationMixed;
  /** For the report: which approach, where. */
  readonly description: string;
  /** Stops what the identity needed for this run (a loopback Client ID Metadata Document). */
  close(): Promise<void>;
}

/**
 * What `login` registers, or what its Client ID Metadata Document says: a public client on the code grant with
 * refresh tokens, and a
 * native application (OpenID Connect Dynamic Client Registration 1.0 §2 `application_type`, which MCP 2026-07-28
 * requires in registrations): its redirect URI is on loopback, which an OpenID provider refuses for the default
 * `web` type.
 */
export function loginClientMetadata(redirectUri: string): OAuthClientMetadata & { readonly application_type: 'native' } {
  return {
    client_name: 'mcp-auth-gateway login',
    application_type: 'native',
    redirect_uris: [redirectUri],
    // A refresh token lets a later run go on without a sign-in; step-up still authorizes again (a refresh cannot
    // widen a grant).
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

const nothingToClose = (): Promise<void> => Promise.resolve();

/** A Client ID Metadata Document is usable when published, or servable on loopback for a loopback server. */
function documentAvailable(server: AuthorizationServerFound, options: ClientIdentityOptions): boolean {
  return options.clientMetadataUrl !== undefined || isLoopbackHost(new URL(server.server).hostname);
}

async function identityFor(
  registration: Registration,
  server: AuthorizationServerFound,
  options: ClientIdentityOptions,
): Promise<ClientIdentity> {
  const description = describeRegistration(registration);
  switch (registration.method) {
    case 'pre-registered': {
      const secret = options.clientSecret === undefined ? {} : { client_secret: options.clientSecret };
      return { information: { client_id: registration.clientId, ...secret }, description, close: nothingToClose };
    }
    case 'client-id-metadata-document': {
      if (options.clientMetadataUrl !== undefined) {
        return { information: { client_id: options.clientMetadataUrl }, description: `${description}: ${options.clientMetadataUrl}`, close: nothingToClose };
      }
      const document = await startClientMetadataServer(loginClientMetadata(options.redirectUri));
      return { information: { client_id: document.url }, description: `${description} served on loopback: ${document.url}`, close: () => document.close() };
    }
    case 'dynamic': {
      const information = await registerClient(server.server, {
        metadata: server.metadata,
        clientMetadata: loginClientMetadata(options.redirectUri),
        fetchFn: options.fetch,
      });
      return { information, description: `${description}: client_id ${information.client_id}`, close: nothingToClose };
    }
  }
}

/**
 * The client_id for `server` by the MCP client's priority: pre-registered, then a Client ID Metadata Document (the
 * published one, or one served on loopback when the authorization server is on loopback too: nothing else could
 * fetch it), then dynamic registration. Undefined when none applies: the user has to supply a client_id.
 */
export async function obtainClientIdentity(server: AuthorizationServerFound, options: ClientIdentityOptions): Promise<ClientIdentity | undefined> {
  const registration = registrationApproaches(server.server, server.metadata, options.clientId).find(
    (approach) => approach.method !== 'client-id-metadata-document' || documentAvailable(server, options),
  );
  return registration === undefined ? undefined : identityFor(registration, server, options);
}

/** Why `obtainClientIdentity` found nothing at `server`, and what the user can pass instead. */
export function missingClientIdentity(server: AuthorizationServerFound): string {
  return server.metadata?.client_id_metadata_document_supported === true
    ? `${server.server} supports Client ID Metadata Documents but not dynamic registration, and cannot fetch one served on this machine: ` +
        'pass --client-metadata-url (your published https document) or --client-id'
    : `${server.server} offers neither Client ID Metadata Documents nor dynamic registration: pass --client-id`;
}
