import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { describe, expect, it } from 'vitest';
import { describeRegistration, registrationApproaches } from '../../../src/client/registration.js';
import { selectScope, unionScopes } from '../../../src/client/scope-selection.js';

const base = { issuer: 'https://as.example.com', authorization_endpoint: 'https://as.example.com/a', token_endpoint: 'https://as.example.com/t', response_types_supported: ['code'] };

describe('registration approaches, in the MCP client priority order', () => {
  it.each<[string, Partial<AuthorizationServerMetadata> | undefined, string | undefined, string[]]>([
    ['pre-registered first, then CIMD, then DCR', { client_id_metadata_document_supported: true, registration_endpoint: 'https://as.example.com/r' }, 'my-client', ['pre-registered', 'client-id-metadata-document', 'dynamic']],
    ['CIMD before DCR', { client_id_metadata_document_supported: true, registration_endpoint: 'https://as.example.com/r' }, undefined, ['client-id-metadata-document', 'dynamic']],
    ['client_id_metadata_document_supported false is no support', { client_id_metadata_document_supported: false, registration_endpoint: 'https://as.example.com/r' }, undefined, ['dynamic']],
    ['nothing automatic: ask the user', {}, undefined, []],
    ['no metadata at all: the 2025-03-26 default /register', undefined, undefined, ['dynamic']],
  ])('%s', (_name, overrides, clientId, methods) => {
    const metadata = overrides === undefined ? undefined : ({ ...base, ...overrides } as AuthorizationServerMetadata);
    expect(registrationApproaches('https://as.example.com', metadata, clientId).map((approach) => approach.method)).toEqual(methods);
  });

  it('describes the default endpoint of a server without metadata', () => {
    const [approach] = registrationApproaches('https://mcp.example.com/', undefined, undefined);
    expect(approach && describeRegistration(approach)).toBe('dynamic client registration at https://mcp.example.com/register (2025-03-26 default)');
  });
});

describe('scope selection (MCP authorization, SEP-835)', () => {
  it.each<[string, string | undefined, string[] | undefined, ReturnType<typeof selectScope>]>([
    ['the challenge scope is authoritative', 'mcp:basic', ['a', 'b'], { scope: 'mcp:basic', source: 'challenge' }],
    ['a challenge scope unrelated to scopes_supported still wins', 'files:read', ['mcp:tools'], { scope: 'files:read', source: 'challenge' }],
    ['else all of scopes_supported', undefined, ['mcp:basic', 'mcp:read'], { scope: 'mcp:basic mcp:read', source: 'scopes_supported' }],
    ['an empty challenge scope counts as none', ' ', ['mcp:read'], { scope: 'mcp:read', source: 'scopes_supported' }],
    ['else omitted', undefined, undefined, { source: 'omitted' }],
    ['an empty scopes_supported is omitted too', undefined, [], { source: 'omitted' }],
  ])('%s', (_name, challenge, supported, expected) => {
    expect(selectScope(challenge, supported)).toEqual(expected);
  });

  it.each<[(string | undefined)[], string]>([
    [['mcp:basic', 'mcp:basic mcp:write'], 'mcp:basic mcp:write'],
    [[undefined, 'a b'], 'a b'],
    [['a  b', 'b c'], 'a b c'],
  ])('step-up keeps what was requested: union of %j is "%s"', (scopes, union) => {
    expect(unionScopes(...scopes)).toBe(union);
  });
});
