import { describe, expect, it } from 'vitest';
import { addressPolicy } from '../../../src/client/address-policy.js';
import { discover } from '../../../src/client/discovery.js';
import { authorizationServerChecks } from '../../../src/client/discovery-checks.js';
import { recordingFetch } from '../../../src/client/recording-fetch.js';

const mcpUrl = new URL('https://mcp.example.com/mcp');
const prmUrl = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp';

function openIdConfiguration(issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    response_types_supported: ['code'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
    code_challenge_methods_supported: ['S256'],
  };
}

/** A recording fetch for a run from `server` that answers `documents` by URL and 404 elsewhere, and the URLs asked for. */
function serving(server: URL, documents: ReadonlyMap<string, unknown> = new Map()): { http: ReturnType<typeof recordingFetch>; requested: string[] } {
  const requested: string[] = [];
  const http = recordingFetch({
    timeoutMs: 10_000,
    addresses: addressPolicy(server, false),
    fetch: (url) => {
      requested.push(String(url));
      const document = documents.get(String(url));
      return Promise.resolve(document === undefined ? new Response('not found', { status: 404 }) : Response.json(document));
    },
  });
  return { http, requested };
}

/** Protected resource metadata naming `issuer`, and the issuer's metadata at `metadataUrl` only; 404 elsewhere. */
function deployment(issuer: string, metadataUrl: string) {
  return serving(
    mcpUrl,
    new Map<string, unknown>([
      [prmUrl, { resource: mcpUrl.href, authorization_servers: [issuer] }],
      [metadataUrl, openIdConfiguration(issuer)],
    ]),
  );
}

describe('authorization server metadata discovery, in the order of the MCP authorization spec', () => {
  it.each([
    [
      'an issuer with a path, served only at OpenID Connect path insertion',
      'https://as.example.com/tenant1',
      'https://as.example.com/.well-known/openid-configuration/tenant1',
      ['https://as.example.com/.well-known/oauth-authorization-server/tenant1', 'https://as.example.com/.well-known/openid-configuration/tenant1'],
    ],
    [
      'an issuer with a path, served only at OpenID Connect path appending',
      'https://as.example.com/tenant1',
      'https://as.example.com/tenant1/.well-known/openid-configuration',
      [
        'https://as.example.com/.well-known/oauth-authorization-server/tenant1',
        'https://as.example.com/.well-known/openid-configuration/tenant1',
        'https://as.example.com/tenant1/.well-known/openid-configuration',
      ],
    ],
    [
      'an issuer without a path, served only at OpenID Connect discovery',
      'https://as.example.com',
      'https://as.example.com/.well-known/openid-configuration',
      ['https://as.example.com/.well-known/oauth-authorization-server', 'https://as.example.com/.well-known/openid-configuration'],
    ],
  ])('%s: found after trying the URLs before it, in order', async (_name, issuer, metadataUrl, order) => {
    const { http, requested } = deployment(issuer, metadataUrl);
    const discovery = await discover(mcpUrl, prmUrl, http);
    expect(requested).toEqual([prmUrl, ...order]);
    const [found] = discovery.authorizationServers;
    expect(found).toMatchObject({ server: issuer, metadataUrl, tried: order.slice(0, -1).map((url) => ({ url, outcome: 'HTTP 404' })) });
    expect(found && authorizationServerChecks(found, discovery)[0]).toMatchObject({ status: 'pass', message: `${issuer}: OpenID Connect discovery at ${metadataUrl}` });
  });
});

describe('protected resource metadata URLs keep the query of the MCP server URL (RFC 9728 §3.1)', () => {
  it.each([
    ['a path and a query', 'https://mcp.example.com/mcp?tenant=a', ['https://mcp.example.com/.well-known/oauth-protected-resource/mcp?tenant=a', 'https://mcp.example.com/.well-known/oauth-protected-resource']],
    ['a query on the root', 'https://mcp.example.com/?tenant=a', ['https://mcp.example.com/.well-known/oauth-protected-resource?tenant=a']],
  ])('%s: path shape A (or the root, for a URL without a path) carries it', async (_name, server, expected) => {
    const { http, requested } = serving(new URL(server));
    await discover(new URL(server), undefined, http);
    expect(requested.slice(0, expected.length)).toEqual(expected);
  });

  it("the challenge's resource_metadata is fetched as given, query included", async () => {
    const { http, requested } = serving(mcpUrl);
    await discover(mcpUrl, `${prmUrl}?tenant=a&x=%2F`, http);
    expect(requested[0]).toBe(`${prmUrl}?tenant=a&x=%2F`);
  });
});
