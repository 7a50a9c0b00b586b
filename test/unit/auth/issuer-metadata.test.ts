import { describe, expect, it } from 'vitest';
import { metadataCandidates } from '../../../src/auth/issuer-metadata.js';

describe('metadataCandidates', () => {
  it('issuer with a path: RFC 8414 insertion, OIDC insertion, then OIDC appended', () => {
    expect(metadataCandidates('https://auth.example.com/realms/mcp')).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server/realms/mcp',
      'https://auth.example.com/.well-known/openid-configuration/realms/mcp',
      'https://auth.example.com/realms/mcp/.well-known/openid-configuration',
    ]);
  });

  it('a terminating slash of the issuer path is removed first (RFC 8414 §3.1)', () => {
    expect(metadataCandidates('https://auth.example.com/tenant/')).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server/tenant',
      'https://auth.example.com/.well-known/openid-configuration/tenant',
      'https://auth.example.com/tenant/.well-known/openid-configuration',
    ]);
  });

  it.each([['https://auth.example.com'], ['https://auth.example.com/']])('issuer %s without a path: two URLs', (issuer) => {
    expect(metadataCandidates(issuer)).toEqual([
      'https://auth.example.com/.well-known/oauth-authorization-server',
      'https://auth.example.com/.well-known/openid-configuration',
    ]);
  });

  it('keeps a non-default port in the origin', () => {
    expect(metadataCandidates('http://127.0.0.1:8443/as')[0]).toBe(
      'http://127.0.0.1:8443/.well-known/oauth-authorization-server/as',
    );
  });
});
