import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { Provider } from 'oidc-provider';

/**
 * A real oidc-provider configured like an organisation's IdP for a gateway that keeps it: no registration, opaque
 * access tokens for one resource (client_credentials), and an introspection endpoint that answers only a client
 * authenticating with private_key_jwt (RFC 7523).
 */
export interface OidcIntrospectionServer {
  readonly issuer: string;
  readonly introspectionEndpoint: string;
  /** Client id the gateway introspects with; it holds `gatewayPrivateJwk`. */
  readonly gatewayClientId: string;
  /** The gateway's private key as a JWK with `kid`; its public half is registered at the server. */
  readonly gatewayPrivateJwk: JWK;
  /** An opaque access token for `resource` with `scope`, issued to another client by client_credentials. */
  issueToken(scope: string): Promise<string>;
  close(): Promise<void>;
}

const APP_CLIENT = { id: 'app', secret: randomBytes(24).toString('base64url') };

export async function startOidcIntrospectionServer(resource: string): Promise<OidcIntrospectionServer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const gatewayKey = await generateKeyPair('ES256', { extractable: true });
  const gatewayPublicJwk = { ...(await exportJWK(gatewayKey.publicKey)), kid: 'gateway-1', alg: 'ES256', use: 'sig' };
  const gatewayPrivateJwk = { ...(await exportJWK(gatewayKey.privateKey)), kid: 'gateway-1' };
  const signingKey = await generateKeyPair('ES256', { extractable: true });

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'gateway',
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: 'ES256',
        jwks: { keys: [gatewayPublicJwk] },
        grant_types: [],
        response_types: [],
        redirect_uris: [],
      },
      {
        client_id: APP_CLIENT.id,
        client_secret: APP_CLIENT.secret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    jwks: { keys: [{ ...(await exportJWK(signingKey.privateKey)), kid: 'as-1', alg: 'ES256', use: 'sig' }] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true, allowedPolicy: (_ctx, client) => client.clientAuthMethod === 'private_key_jwt' },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        getResourceServerInfo: () => ({ scope: 'mcp:tools calc:write', audience: resource, accessTokenFormat: 'opaque' }),
        useGrantedResource: () => true,
      },
    },
  });
  const handle = provider.callback();
  server.on('request', (request, response) => void handle(request, response));

  return {
    issuer,
    introspectionEndpoint: `${issuer}/token/introspection`,
    gatewayClientId: 'gateway',
    gatewayPrivateJwk,
    async issueToken(scope) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${APP_CLIENT.id}:${APP_CLIENT.secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (response.status !== 200 || body.access_token === undefined) throw new Error(`token request failed: ${response.status}`);
      return body.access_token;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
