import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * How a client gets its client_id at an authorization server (MCP authorization, "Client Registration
 * Approaches").
 */
export type Registration =
  | { readonly method: 'pre-registered'; readonly clientId: string }
  | { readonly method: 'client-id-metadata-document' }
  /** `defaultEndpoint`: no metadata, so the 2025-03-26 default `/register` at the server. */
  | { readonly method: 'dynamic'; readonly endpoint: string; readonly defaultEndpoint: boolean };

/**
 * The approaches that apply, in the MCP client's priority order: pre-registered credentials (`clientId`), a Client
 * ID Metadata Document when the server advertises `client_id_metadata_document_supported`, dynamic registration
 * when there is a `registration_endpoint` (or, without any metadata, the 2025-03-26 default `/register`). Empty:
 * the user has to supply a client_id.
 */
export function registrationApproaches(
  server: string,
  metadata: AuthorizationServerMetadata | undefined,
  clientId: string | undefined,
): Registration[] {
  const approaches: Registration[] = [];
  if (clientId !== undefined) approaches.push({ method: 'pre-registered', clientId });
  if (metadata?.client_id_metadata_document_supported === true) approaches.push({ method: 'client-id-metadata-document' });
  if (metadata?.registration_endpoint !== undefined) {
    approaches.push({ method: 'dynamic', endpoint: metadata.registration_endpoint, defaultEndpoint: false });
  } else if (metadata === undefined) {
    approaches.push({ method: 'dynamic', endpoint: new URL('/register', server).href, defaultEndpoint: true });
  }
  return approaches;
}

export function describeRegistration(registration: Registration): string {
  switch (registration.method) {
    case 'pre-registered':
      return `the pre-registered client_id ${registration.clientId}`;
    case 'client-id-metadata-document':
      return 'a Client ID Metadata Document (client_id_metadata_document_supported)';
    case 'dynamic':
      return `dynamic client registration at ${registration.endpoint}${registration.defaultEndpoint ? ' (2025-03-26 default)' : ''}`;
  }
}
