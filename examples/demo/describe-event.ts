import type { FlowEvent } from './flow-trace.js';

function list(values: readonly string[]): string {
  return values.length === 0 ? '(none)' : values.join(', ');
}

function quoted(value: string | undefined): string {
  return value === undefined ? '(none)' : `"${value}"`;
}

/** One human-readable line per flow step, for `npm run demo:client`. Events carry no secrets, nor do the lines. */
export function describeFlowEvent(event: FlowEvent): string {
  switch (event.kind) {
    case 'challenge':
      return event.status === 401
        ? `401 from the gateway: WWW-Authenticate names resource_metadata ${event.resourceMetadata ?? '(none)'} and scope ${quoted(event.scope)}`
        : `${event.status} ${event.error ?? ''} from the gateway: this operation needs scope ${quoted(event.scope)}`;
    case 'resource_metadata':
      return (
        `protected resource metadata ${event.url}: resource ${event.resource ?? '(none)'}, ` +
        `authorization servers ${list(event.authorizationServers)}, scopes ${list(event.scopesSupported)}`
      );
    case 'authorization_server_metadata':
      return (
        `authorization server metadata ${event.url}: PKCE ${list(event.codeChallengeMethods)}, ` +
        `registration endpoint ${event.registrationEndpoint ?? '(none)'}, ` +
        `client ID metadata documents ${event.clientIdMetadataDocuments ? 'supported' : 'not supported'}`
      );
    case 'registration':
      return `dynamic client registration (RFC 7591): HTTP ${event.status}, client_id ${event.clientId ?? '(none)'}`;
    case 'client_id_metadata_document':
      return `client_id is the client's metadata document URL: ${event.clientId}`;
    case 'authorization':
      return (
        `authorization request: client_id ${event.clientId}, PKCE ${event.codeChallengeMethod ?? '(none)'}, ` +
        `resource ${event.resource ?? '(none)'}, scope ${quoted(event.scope)}, redirect_uri ${event.redirectUri}`
      );
    case 'authorization_response':
      return 'authorization approved: code received at the redirect URI, state matches (the code is not shown)';
    case 'token':
      return event.status === 200
        ? `token (${event.grantType ?? 'unknown grant'}, resource ${event.resource ?? '(none)'}): scope ${quoted(event.scope)}, ` +
            `expires in ${event.expiresIn ?? '?'} s, ${event.refreshToken ? 'with' : 'no'} refresh token (the token is not shown)`
        : `token request refused: HTTP ${event.status} ${event.error ?? ''}`;
    case 'mcp':
      return `MCP ${event.httpMethod}${event.rpcMethod === undefined ? '' : ` ${event.rpcMethod}`} → HTTP ${event.status}`;
  }
}
