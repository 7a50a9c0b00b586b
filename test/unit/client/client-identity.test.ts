import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { describe, expect, it } from 'vitest';
import { missingClientIdentity, obtainClientIdentity } from '../../../src/client/client-identity.js';
import type { AuthorizationServerFound } from '../../../src/client/discovery.js';

const redirectUri = 'http://127.0.0.1:4567/callback';

function authorizationServer(server: string, overrides: Partial<AuthorizationServerMetadata> = {}): AuthorizationServerFound {
  const metadata: AuthorizationServerMetadata = {
    issuer: server,
    authorization_endpoint: `${server}/authorize`,
    token_endpoint: `${server}/token`,
    registration_endpoint: `${server}/register`,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
    client_id_metadata_document_supported: true,
    ...overrides,
  };
  return { server, metadata, tried: [] };
}

/** A registration endpoint that answers every POST with client_id `registered-client`, and what was requested. */
function registrationFetch(): { readonly requests: string[]; readonly bodies: unknown[]; readonly fetch: FetchLike } {
  const requests: string[] = [];
  const bodies: unknown[] = [];
  return {
    requests,
    bodies,
    fetch: (url, init) => {
      requests.push(`${init?.method ?? 'GET'} ${String(url)}`);
      bodies.push(JSON.parse(typeof init?.body === 'string' ? init.body : 'null'));
      return Promise.resolve(Response.json({ client_id: 'registered-client', redirect_uris: [redirectUri] }, { status: 201 }));
    },
  };
}

describe('client identity: pre-registered, else a Client ID Metadata Document that can be fetched, else DCR', () => {
  it('G3: an https authorization server offering CIMD and DCR, no --client-metadata-url: dynamic registration, no loopback document', async () => {
    const http = registrationFetch();
    const identity = await obtainClientIdentity(authorizationServer('https://as.example.com'), { redirectUri, fetch: http.fetch });
    expect(identity?.information.client_id).toBe('registered-client');
    expect(identity?.description).toBe('dynamic client registration at https://as.example.com/register: client_id registered-client');
    expect(http.requests).toEqual(['POST https://as.example.com/register']);
    await identity?.close();
  });

  it('registers as a native application (loopback redirect URI), as MCP 2026-07-28 requires of every registration', async () => {
    const http = registrationFetch();
    await obtainClientIdentity(authorizationServer('https://as.example.com'), { redirectUri, fetch: http.fetch });
    expect(http.bodies).toEqual([expect.objectContaining({ application_type: 'native', redirect_uris: [redirectUri] })]);
  });

  it('the same server with --client-metadata-url: the published document is the client_id, nothing registered', async () => {
    const http = registrationFetch();
    const published = 'https://client.example.com/oauth/metadata.json';
    const identity = await obtainClientIdentity(authorizationServer('https://as.example.com'), { redirectUri, clientMetadataUrl: published, fetch: http.fetch });
    expect(identity?.information.client_id).toBe(published);
    expect(http.requests).toEqual([]);
  });

  it('an authorization server on loopback: a document served on loopback, whose client_id is its own URL', async () => {
    const http = registrationFetch();
    const identity = await obtainClientIdentity(authorizationServer('http://127.0.0.1:9000'), { redirectUri, fetch: http.fetch });
    try {
      const documentUrl = identity?.information.client_id ?? '';
      expect(documentUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oauth\/client-metadata\.json$/);
      expect(await (await fetch(documentUrl)).json()).toMatchObject({ client_id: documentUrl, redirect_uris: [redirectUri], application_type: 'native' });
      expect(http.requests).toEqual([]);
    } finally {
      await identity?.close();
    }
  });

  it('the pre-registered --client-id comes first', async () => {
    const http = registrationFetch();
    const identity = await obtainClientIdentity(authorizationServer('https://as.example.com'), { redirectUri, clientId: 'mine', clientSecret: 's', fetch: http.fetch });
    expect(identity?.information).toEqual({ client_id: 'mine', client_secret: 's' });
    expect(http.requests).toEqual([]);
  });

  it.each<[string, AuthorizationServerFound, string]>([
    [
      'G3: CIMD offered but not usable (https server, no published document, no DCR): what to pass',
      authorizationServer('https://as.example.com', { registration_endpoint: undefined }),
      'https://as.example.com supports Client ID Metadata Documents but not dynamic registration, and cannot fetch one served on this machine: pass --client-metadata-url (your published https document) or --client-id',
    ],
    [
      'neither CIMD nor DCR',
      authorizationServer('https://as.example.com', { registration_endpoint: undefined, client_id_metadata_document_supported: undefined }),
      'https://as.example.com offers neither Client ID Metadata Documents nor dynamic registration: pass --client-id',
    ],
  ])('%s', async (_name, server, message) => {
    expect(await obtainClientIdentity(server, { redirectUri, fetch: registrationFetch().fetch })).toBeUndefined();
    expect(missingClientIdentity(server)).toBe(message);
  });
});
