import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/config/secret.js';
import { createAuthorizationCodeFlow } from '../../src/grants/authorization-code-client.js';
import { createOidcLogin } from '../../src/grants/oidc-login.js';
import { launchChromium } from '../clients/browser.js';
import { signInAtGlewlwyd, type GlewlwydSignIn } from '../helpers/glewlwyd-login.js';
import { startGlewlwyd } from '../helpers/glewlwyd.js';
import { suiteValue } from '../helpers/suite-value.js';

/**
 * Glewlwyd, a third-party OpenID Connect provider (Debian's package), proven usable as the organisation's IdP of
 * `authorization_server.sign_in`: a real relying party (oauth4webapi) signs a person in through glewlwyd's real
 * login page in Chromium, with code + PKCE + state + nonce, and validates the ID token.
 */

/** The gateway's sign-in callback under the test gateways' public_url: the browser walk stops at the redirect there. */
const REDIRECT_URI = 'https://gw.example.test/consent/login/callback';
const CLIENT = { clientId: 'mcp-gateway', clientSecret: 'glewlwyd-test-secret', redirectUris: [REDIRECT_URI] };
const ALICE = { username: 'alice', password: 'alice-password-1', email: 'alice@example.org', name: 'Alice Example', claims: { groups: ['calc-admins', 'staff'] } };
const BOB = { username: 'bob', password: 'bob-password-1', email: 'bob@example.org' };
const CAROL = { username: 'carol', password: 'carol-password-1', email: 'carol@example.org', claims: { groups: ['staff'] } };
const client: oauth.Client = { client_id: CLIENT.clientId };
const clientAuth = oauth.ClientSecretPost(CLIENT.clientSecret);
const insecure = { [oauth.allowInsecureRequests]: true } as const;

const idp = suiteValue('glewlwyd', () => startGlewlwyd({ client: CLIENT, users: [ALICE, BOB, CAROL], claims: ['groups'] }), (started) => started.stop());
const browser = suiteValue('Chromium', launchChromium, (pages) => pages.close());
let as: oauth.AuthorizationServer;

beforeAll(async () => {
  const issuer = new URL(idp.issuer);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }));
});

/** One relying-party sign-in's secrets and the authorization request that carries them. */
async function authorizationRequest(scope = 'openid email profile', extra: Record<string, string> = {}): Promise<{ url: URL; state: string; nonce: string; verifier: string }> {
  const [state, nonce, verifier] = [oauth.generateRandomState(), oauth.generateRandomNonce(), oauth.generateRandomCodeVerifier()];
  const url = new URL(as.authorization_endpoint ?? '');
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: CLIENT.clientId,
    redirect_uri: REDIRECT_URI,
    scope,
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  }).toString();
  return { url, state, nonce, verifier };
}

function redirectedTo(signIn: GlewlwydSignIn): URL {
  if (signIn.outcome !== 'redirected') throw new Error(`sign-in refused: ${signIn.message}`);
  return signIn.url;
}

/** The code exchanged at the token endpoint; the ID token's iss, aud, exp, nonce and signature (JWKS) checked. */
async function exchange(callback: URL, request: { state: string; nonce: string; verifier: string }): Promise<{ tokens: oauth.TokenEndpointResponse; claims: oauth.IDToken }> {
  const parameters = oauth.validateAuthResponse(as, client, callback, request.state);
  const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth, parameters, REDIRECT_URI, request.verifier, insecure);
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: request.nonce, requireIdToken: true });
  await oauth.validateApplicationLevelSignature(as, response, insecure);
  const claims = oauth.getValidatedIdTokenClaims(tokens);
  if (!claims) throw new Error('no ID token');
  return { tokens, claims };
}

describe('glewlwyd as the IdP of authorization_server.sign_in', () => {
  it('discovery at the issuer: OpenID Connect metadata for the code flow with S256 PKCE and a JWKS (no RFC 8414 document)', async () => {
    expect(as).toMatchObject({
      issuer: idp.issuer,
      authorization_endpoint: `${idp.issuer}/auth`,
      token_endpoint: `${idp.issuer}/token`,
      jwks_uri: `${idp.issuer}/jwks`,
      code_challenge_methods_supported: ['S256'],
      subject_types_supported: ['public'],
    });
    expect(as.response_types_supported).toContain('code');
    expect(as.id_token_signing_alg_values_supported).toContain('RS256');
    expect(as.claims_supported).toEqual(expect.arrayContaining(['email', 'name', 'groups']));
    // No RFC 8414 document, neither at the path-inserted address nor under the issuer: OpenID Connect discovery only.
    const { origin, pathname } = new URL(idp.issuer);
    expect((await fetch(`${origin}/.well-known/oauth-authorization-server${pathname}`)).status).toBe(404);
    expect((await fetch(`${idp.issuer}/.well-known/oauth-authorization-server`)).status).toBe(404);
  });

  it('code + PKCE + state + nonce through the real login page: the ID token validates (iss, aud, nonce, RS256 via JWKS) and carries email, name and groups', async () => {
    const request = await authorizationRequest();
    const callback = redirectedTo(await signInAtGlewlwyd(browser, request.url, ALICE));
    expect(callback.searchParams.get('state')).toBe(request.state);
    expect(callback.searchParams.get('code')).toBeTruthy();

    const { tokens, claims } = await exchange(callback, request);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(claims).toMatchObject({ iss: idp.issuer, aud: CLIENT.clientId, nonce: request.nonce, email: ALICE.email, name: ALICE.name, groups: ALICE.claims.groups });
    expect(claims.sub).toBeTruthy();
    expect(claims.sub).not.toBe(ALICE.username);
  });

  it('a person without the extra claim gets an ID token without it', async () => {
    const request = await authorizationRequest();
    const { claims } = await exchange(redirectedTo(await signInAtGlewlwyd(browser, request.url, BOB)), request);
    expect(claims).toMatchObject({ email: BOB.email });
    expect(claims).not.toHaveProperty('groups');
  });

  it('a person who leaves email unticked on glewlwyd\'s consent screen gets an ID token without email', async () => {
    const request = await authorizationRequest();
    const { tokens, claims } = await exchange(redirectedTo(await signInAtGlewlwyd(browser, request.url, CAROL, { decline: ['email'] })), request);
    expect(claims).not.toHaveProperty('email');
    expect(claims).toMatchObject({ name: CAROL.username, groups: CAROL.claims.groups });
    expect(tokens.scope).toBe('openid profile');
  });

  it('a second sign-in of the same person goes past the remembered consent, with a new code for the new nonce', async () => {
    const first = await authorizationRequest();
    await exchange(redirectedTo(await signInAtGlewlwyd(browser, first.url, ALICE)), first);
    const second = await authorizationRequest();
    const { claims } = await exchange(redirectedTo(await signInAtGlewlwyd(browser, second.url, ALICE)), second);
    expect(claims.nonce).toBe(second.nonce);
  });

  it('what a relying party must tolerate: no RFC 9207 iss in the redirect, auth_time 0, an RFC 8707 resource ignored (the access token aud is the scope list), no refresh token rotation', async () => {
    const request = await authorizationRequest('openid email profile', { resource: 'https://mcp.example.com/calc' });
    const callback = redirectedTo(await signInAtGlewlwyd(browser, request.url, ALICE));
    expect(callback.searchParams.has('iss')).toBe(false);
    expect(as.authorization_response_iss_parameter_supported).toBeUndefined();
    const { tokens, claims } = await exchange(callback, request);
    expect(claims).toMatchObject({ auth_time: 0, amr: ['password'], azp: CLIENT.clientId });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: 'openid email profile', scope: 'openid email profile' });
    const refreshed = await oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token ?? '', insecure));
    expect(refreshed.refresh_token).toBeUndefined();
    expect(refreshed.id_token).toBeUndefined();
  });

  it('an authorization request without openid is refused with invalid_scope, after the person signed in', async () => {
    const request = await authorizationRequest('email profile');
    const callback = redirectedTo(await signInAtGlewlwyd(browser, request.url, ALICE));
    expect(callback.searchParams.get('code')).toBeNull();
    expect(callback.searchParams.get('error')).toBe('invalid_scope');
  });

  it("the gateway's own OpenID Connect sign-in (consent.login's client, client_secret_basic) signs a person in at glewlwyd: iss + sub", async () => {
    const clientAuth = { method: 'client_secret_basic', clientSecret: new Secret(CLIENT.clientSecret) } as const;
    const flow = createAuthorizationCodeFlow({ issuer: idp.issuer, clientId: CLIENT.clientId, clientAuth, timeout: 5_000 }, { resource: undefined });
    const login = createOidcLogin(flow, CLIENT.clientId, 5_000);
    const [state, nonce] = [oauth.generateRandomState(), oauth.generateRandomNonce()];
    const started = await login.start(REDIRECT_URI, state, nonce);
    if (!started) throw new Error('the gateway found no usable metadata at glewlwyd');
    const callback = redirectedTo(await signInAtGlewlwyd(browser, started.url, ALICE));
    expect(callback.searchParams.get('state')).toBe(state);

    const result = await login.finish(callback.searchParams.get('code') ?? '', started.codeVerifier, REDIRECT_URI, nonce);
    // The verified claims come along: the authorization server's entitlements are decided from them.
    expect(result).toEqual({
      ok: true,
      user: { issuer: idp.issuer, subject: expect.any(String) as unknown },
      claims: expect.objectContaining({ iss: idp.issuer, nonce, groups: ALICE.claims.groups }) as unknown,
    });
  });

  it('a wrong password stays on the login page: no code is issued', async () => {
    const request = await authorizationRequest();
    const signIn = await signInAtGlewlwyd(browser, request.url, { username: ALICE.username, password: 'not-her-password' });
    expect(signIn).toMatchObject({ outcome: 'refused', message: 'Authentication error' });
    if (signIn.outcome !== 'refused') return;
    expect(signIn.pageUrl.pathname).toBe('/login.html');
    expect(signIn.pageUrl.searchParams.has('code')).toBe(false);
  });

  it('a code is bound to its PKCE verifier: the exchange with another verifier is refused', async () => {
    const request = await authorizationRequest();
    const callback = redirectedTo(await signInAtGlewlwyd(browser, request.url, ALICE));
    // glewlwyd answers `invalid_code` (RFC 7636 §4.6 asks for invalid_grant): a refusal either way, no tokens.
    await expect(exchange(callback, { ...request, verifier: oauth.generateRandomCodeVerifier() })).rejects.toBeInstanceOf(oauth.ResponseBodyError);
  });

  it('client_secret_basic with form-encoded credentials (RFC 6749 §2.3.1) is refused: glewlwyd does not decode them (client_secret_post works)', async () => {
    const request = await authorizationRequest();
    const parameters = oauth.validateAuthResponse(as, client, redirectedTo(await signInAtGlewlwyd(browser, request.url, ALICE)), request.state);
    // oauth4webapi encodes the `-` of `mcp-gateway` as %2D, as §2.3.1 allows; glewlwyd compares the raw text.
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretBasic(CLIENT.clientSecret), parameters, REDIRECT_URI, request.verifier, insecure);
    await expect(oauth.processAuthorizationCodeResponse(as, client, response)).rejects.toMatchObject({ error: 'unauthorized_client' });
  });

  it('an authorization request without PKCE is refused before the login page (pkce-required)', async () => {
    const request = await authorizationRequest();
    request.url.searchParams.delete('code_challenge');
    request.url.searchParams.delete('code_challenge_method');
    const callback = redirectedTo(await signInAtGlewlwyd(browser, request.url, ALICE));
    expect(callback.searchParams.get('code')).toBeNull();
    expect(callback.searchParams.get('error')).toBe('invalid_request');
  });
});
