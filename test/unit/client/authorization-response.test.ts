import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { describe, expect, it } from 'vitest';
import { checkAuthorizationResponse } from '../../../src/client/authorization-response.js';
import type { AuthorizationServerFound } from '../../../src/client/discovery.js';

const ISSUER = 'https://as.example.com';

function server(issParameterSupported: boolean | undefined): AuthorizationServerFound {
  const metadata: AuthorizationServerMetadata & { authorization_response_iss_parameter_supported?: boolean } = {
    issuer: ISSUER,
    authorization_endpoint: `${ISSUER}/authorize`,
    token_endpoint: `${ISSUER}/token`,
    response_types_supported: ['code'],
    ...(issParameterSupported === undefined ? {} : { authorization_response_iss_parameter_supported: issParameterSupported }),
  };
  return { server: ISSUER, metadata, tried: [] };
}

const check = (found: AuthorizationServerFound, query: string) => () => checkAuthorizationResponse(found, 'client', 'st', new URLSearchParams(query));

describe('authorization response iss (RFC 9207 §2.4): a response from another authorization server is never redeemed', () => {
  it.each<[string, boolean | undefined, string]>([
    ['advertised and the issuer', true, `code=c&state=st&iss=${encodeURIComponent(ISSUER)}`],
    ['not advertised and absent', undefined, 'code=c&state=st'],
    ['advertised false and absent', false, 'code=c&state=st'],
    ['not advertised but present and the issuer', undefined, `code=c&state=st&iss=${encodeURIComponent(ISSUER)}`],
  ])('accepted: %s', (_name, supported, query) => {
    expect(check(server(supported), query)()).toEqual({ code: 'c' });
  });

  it.each<[string, boolean | undefined, string, string]>([
    ['advertised but missing', true, 'code=c&state=st', 'response parameter "iss" (issuer) missing'],
    ['advertised and another issuer', true, 'code=c&state=st&iss=https%3A%2F%2Fevil.example.com', 'unexpected "iss"'],
    ['not advertised, present and another issuer', undefined, 'code=c&state=st&iss=https%3A%2F%2Fevil.example.com', 'unexpected "iss"'],
    ['the issuer with a trailing slash (no URL normalisation)', true, `code=c&state=st&iss=${encodeURIComponent(`${ISSUER}/`)}`, 'unexpected "iss"'],
    ['the issuer in upper case', true, 'code=c&state=st&iss=HTTPS%3A%2F%2FAS.EXAMPLE.COM', 'unexpected "iss"'],
    ['the issuer with its default port', true, `code=c&state=st&iss=${encodeURIComponent('https://as.example.com:443')}`, 'unexpected "iss"'],
    ['the issuer percent-encoded differently', true, `code=c&state=st&iss=${encodeURIComponent('https://as.example%2Ecom')}`, 'unexpected "iss"'],
    ['the issuer twice, once right and once wrong', true, `code=c&state=st&iss=${encodeURIComponent(ISSUER)}&iss=https%3A%2F%2Fevil.example.com`, '"iss"'],
    ['an empty iss although advertised', true, 'code=c&state=st&iss=', 'response parameter "iss" (issuer) missing'],
    ['an error response from another issuer (checked before the error is believed)', undefined, 'error=access_denied&state=st&iss=https%3A%2F%2Fevil.example.com', 'unexpected "iss"'],
  ])('refused: %s', (_name, supported, query, message) => {
    expect(check(server(supported), query)).toThrow(message);
  });

  it('a refusal names the expected issuer and the rule, never the code', () => {
    expect(check(server(true), 'code=SECRET-CODE&state=st&iss=https%3A%2F%2Fevil.example.com')).toThrow(
      new Error(`the authorization response was refused: unexpected "iss" (issuer) response parameter value (the issuer is ${ISSUER}; RFC 9207 §2.4: a response from another server is not redeemed)`),
    );
  });

  it('an error response from the right issuer names its error code', () => {
    expect(check(server(true), `error=access_denied&state=st&iss=${encodeURIComponent(ISSUER)}`)).toThrow('the authorization server refused: access_denied');
  });

  it('without metadata (2025-03-26 fallback) there is no issuer to compare with: a present iss is not checked', () => {
    const legacy: AuthorizationServerFound = { server: 'https://mcp.example.com/', tried: [] };
    expect(checkAuthorizationResponse(legacy, 'client', 'st', new URLSearchParams('code=c&state=st&iss=https%3A%2F%2Fmcp.example.com'))).toEqual({ code: 'c' });
  });
});
