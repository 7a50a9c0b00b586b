import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * One observable step of the MCP authorization flow, as seen on the wire. No event carries a token, an
 * authorization code, a code verifier or a client secret.
 */
export type FlowEvent =
  | { readonly kind: 'challenge'; readonly status: number; readonly error?: string; readonly scope?: string; readonly resourceMetadata?: string }
  | {
      readonly kind: 'resource_metadata';
      readonly url: string;
      readonly resource: string | undefined;
      readonly authorizationServers: readonly string[];
      readonly scopesSupported: readonly string[];
    }
  | {
      readonly kind: 'authorization_server_metadata';
      readonly url: string;
      readonly issuer: string | undefined;
      readonly registrationEndpoint: string | undefined;
      readonly codeChallengeMethods: readonly string[];
      readonly clientIdMetadataDocuments: boolean;
    }
  | { readonly kind: 'registration'; readonly status: number; readonly clientId: string | undefined }
  | { readonly kind: 'client_id_metadata_document'; readonly clientId: string }
  | {
      readonly kind: 'authorization';
      readonly clientId: string;
      readonly scope: string | undefined;
      readonly resource: string | undefined;
      readonly codeChallengeMethod: string | undefined;
      readonly redirectUri: string;
    }
  /** The authorization response reached the redirect URI with a code and the state the request was sent with. */
  | { readonly kind: 'authorization_response' }
  | {
      readonly kind: 'token';
      readonly status: number;
      readonly grantType: string | undefined;
      readonly resource: string | undefined;
      readonly scope: string | undefined;
      readonly expiresIn: number | undefined;
      readonly refreshToken: boolean;
      readonly error: string | undefined;
    }
  | { readonly kind: 'mcp'; readonly httpMethod: string; readonly rpcMethod: string | undefined; readonly status: number };

export type FlowListener = (event: FlowEvent) => void;

type Json = Record<string, unknown>;

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

async function jsonOf(response: Response): Promise<Json> {
  try {
    const body: unknown = await response.clone().json();
    return isJson(body) ? body : {};
  } catch {
    return {};
  }
}

function rpcMethodOf(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const message: unknown = JSON.parse(body);
    return isJson(message) ? stringOf(message.method) : undefined;
  } catch {
    return undefined;
  }
}

function formOf(body: unknown): URLSearchParams {
  if (body instanceof URLSearchParams) return body;
  return new URLSearchParams(typeof body === 'string' ? body : '');
}

const PRM_PATH = '/.well-known/oauth-protected-resource';
const AS_METADATA_PATHS = ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];

/**
 * Wraps the fetch an SDK transport uses and reports each authorization step it sees: challenges from the MCP
 * endpoint, metadata documents, registration and token responses (scope and lifetime only), MCP exchanges.
 * Endpoints are learnt from the authorization server metadata it observed, never guessed.
 */
export function createTracingFetch(mcpUrl: URL, listener: FlowListener, baseFetch: FetchLike = fetch): FetchLike {
  let registrationEndpoint: string | undefined;
  let tokenEndpoint: string | undefined;

  async function observe(url: URL, init: RequestInit | undefined, response: Response): Promise<void> {
    const method = (init?.method ?? 'GET').toUpperCase();
    const target = url.href;
    if (target === mcpUrl.href) {
      if (response.status === 401 || response.status === 403) {
        const { error, scope, resourceMetadataUrl } = extractWWWAuthenticateParams(response);
        listener({ kind: 'challenge', status: response.status, error, scope, resourceMetadata: resourceMetadataUrl?.href });
      } else {
        listener({ kind: 'mcp', httpMethod: method, rpcMethod: rpcMethodOf(init?.body), status: response.status });
      }
      return;
    }
    if (method === 'GET' && response.ok && url.pathname.startsWith(PRM_PATH)) {
      const document = await jsonOf(response);
      listener({
        kind: 'resource_metadata',
        url: target,
        resource: stringOf(document.resource),
        authorizationServers: stringsOf(document.authorization_servers),
        scopesSupported: stringsOf(document.scopes_supported),
      });
      return;
    }
    if (method === 'GET' && response.ok && AS_METADATA_PATHS.some((path) => url.pathname.startsWith(path))) {
      const document = await jsonOf(response);
      registrationEndpoint = stringOf(document.registration_endpoint);
      tokenEndpoint = stringOf(document.token_endpoint);
      listener({
        kind: 'authorization_server_metadata',
        url: target,
        issuer: stringOf(document.issuer),
        registrationEndpoint,
        codeChallengeMethods: stringsOf(document.code_challenge_methods_supported),
        clientIdMetadataDocuments: document.client_id_metadata_document_supported === true,
      });
      return;
    }
    if (method === 'POST' && target === registrationEndpoint) {
      listener({ kind: 'registration', status: response.status, clientId: stringOf((await jsonOf(response)).client_id) });
      return;
    }
    if (method === 'POST' && target === tokenEndpoint) {
      const form = formOf(init?.body);
      const body = await jsonOf(response);
      listener({
        kind: 'token',
        status: response.status,
        grantType: form.get('grant_type') ?? undefined,
        resource: form.get('resource') ?? undefined,
        scope: stringOf(body.scope),
        expiresIn: typeof body.expires_in === 'number' ? body.expires_in : undefined,
        refreshToken: typeof body.refresh_token === 'string',
        error: stringOf(body.error),
      });
    }
  }

  return async (input, init) => {
    const response = await baseFetch(input, init);
    await observe(new URL(input), init, response);
    return response;
  };
}
