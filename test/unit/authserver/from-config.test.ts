import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { introspectionClientsFromRoutes, resourcesFromRoutes } from '../../../src/authserver/from-config.js';
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

function compile(routes: Record<string, unknown>[]): CompiledConfig {
  const result = parseConfig(stringify({ public_url: 'https://gw.example.com', routes }), {
    env: { INTROSPECTION_SECRET: 'introspection-secret' },
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe('resourcesFromRoutes', () => {
  it('offers mcp:tools, the advertised scopes and every policy scope, once each', () => {
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
