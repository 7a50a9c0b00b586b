import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { devAuthServerOptionsFromConfig, introspectionClientsFromRoutes, resourcesFromRoutes } from '../../../src/authserver/from-config.js';
import { parseConfig } from '../../../src/config/load.js';
import type { CompiledConfig } from '../../../src/config/types.js';

const INTROSPECTION = {
  endpoint: 'http://127.0.0.1:9000/token/introspection',
  client_id: 'gateway',
  client_secret: '${env:INTROSPECTION_SECRET}',
};

function route(name: string, extra: Record<string, unknown>): Record<string, unknown> {
  return {
    name,
    path: `/${name}/mcp`,
    upstream: { url: 'http://127.0.0.1:3000/mcp' },
    authorization_servers: ['https://as.example.com'],
    ...extra,
  };
}

function compile(routes: Record<string, unknown>[], extra: Record<string, unknown> = {}): CompiledConfig {
  const result = parseConfig(stringify({ public_url: 'https://gw.example.com', routes, ...extra }), {
    env: { INTROSPECTION_SECRET: 'introspection-secret' },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe('resourcesFromRoutes', () => {
  it('offers mcp:tools, the advertised scopes and every policy scope, once each; a request without scope gets scopes_supported', () => {
    const config = compile([
      route('calc', {
        scopes_supported: ['mcp:tools', 'calc:read'],
        tokens: { jwt: { issuer: 'https://as.example.com' } },
        policy: { scopes: ['calc:read'], tools: { multiply: ['mcp:tools', 'calc:write'] } },
      }),
    ]);
    expect(resourcesFromRoutes(config.routes)).toEqual([
      {
        resource: 'https://gw.example.com/calc/mcp',
        scopes: ['mcp:tools', 'calc:read', 'calc:write'],
        defaultScopes: ['mcp:tools', 'calc:read'],
        accessTokenFormat: 'jwt',
      },
    ]);
  });

  it('gives introspection-only routes opaque tokens', () => {
    const config = compile([route('notes', { tokens: { introspection: INTROSPECTION } })]);
    expect(resourcesFromRoutes(config.routes)[0]?.accessTokenFormat).toBe('opaque');
  });
});

describe('introspectionClientsFromRoutes', () => {
  it('registers each introspection client once, as a confidential client without grants', () => {
    const config = compile([
      route('notes', { tokens: { introspection: INTROSPECTION } }),
      route('files', { tokens: { introspection: INTROSPECTION } }),
      route('calc', { tokens: { jwt: { issuer: 'https://as.example.com' } } }),
    ]);
    expect(introspectionClientsFromRoutes(config.routes)).toEqual([
      {
        client_id: 'gateway',
        client_secret: 'introspection-secret',
        grant_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ]);
  });

  it('refuses one client id used with two different secrets', () => {
    const config = compile([
      route('notes', { tokens: { introspection: INTROSPECTION } }),
      route('files', { tokens: { introspection: { ...INTROSPECTION, client_secret: 'other-secret' } } }),
    ]);
    expect(() => introspectionClientsFromRoutes(config.routes)).toThrow('"gateway"');
  });
});

describe('devAuthServerOptionsFromConfig: --issuer registers what the config expects there', () => {
  const notes = route('notes', {
    tokens: { jwt: { issuer: 'https://as.example.com' } },
    scopes_supported: ['mcp:tools'],
    upstream: {
      url: 'http://127.0.0.1:3002/mcp',
      auth: {
        type: 'user_oauth',
        issuer: 'https://vendor.example.com',
        client_id: 'gateway-at-notes',
        client_secret: 'notes-secret',
        scope: ['notes:read'],
        resource: 'http://127.0.0.1:3002/mcp',
      },
    },
  });
  const config = compile([notes], { consent: { login: { client_id: 'gateway-consent', client_secret: 'consent-secret' } } });

  it("at the gateway's issuer: the route's resource and the consent sign-in client with the login callback", () => {
    const options = devAuthServerOptionsFromConfig(config, { autoApprove: true });
    expect(options.issuer).toBe('https://as.example.com');
    expect(options.resources.map((resource) => resource.resource)).toEqual(['https://gw.example.com/notes/mcp']);
    expect(options.clients).toEqual([
      {
        client_id: 'gateway-consent',
        client_secret: 'consent-secret',
        redirect_uris: ['https://gw.example.com/consent/login/callback'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ]);
  });

  it("at the vendor's issuer: the upstream resource with the route's scopes and the gateway's client with the consent callback", () => {
    const options = devAuthServerOptionsFromConfig(config, { autoApprove: true, issuer: 'https://vendor.example.com' });
    expect(options.resources).toEqual([{ resource: 'http://127.0.0.1:3002/mcp', scopes: ['notes:read'] }]);
    expect(options.clients).toEqual([
      {
        client_id: 'gateway-at-notes',
        client_secret: 'notes-secret',
        redirect_uris: ['https://gw.example.com/consent/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ]);
  });

  it('an issuer the config expects nothing at is refused', () => {
    expect(() => devAuthServerOptionsFromConfig(config, { autoApprove: true, issuer: 'https://elsewhere.example.com' })).toThrow(
      'the config expects nothing at https://elsewhere.example.com',
    );
  });
});
