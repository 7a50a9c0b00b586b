import { exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIntrospectionClient } from '../../../src/auth/introspection-client.js';
import { Secret } from '../../../src/config/secret.js';
import { inactive, introspectionSettings, startIntrospectionServer, type TestIntrospectionServer } from '../../helpers/introspection-server.js';

const START = 1_800_000_000_000;

let as: TestIntrospectionServer;

beforeEach(async () => {
  as = await startIntrospectionServer();
  as.respond(() => inactive);
});

afterEach(() => as.close());

describe('introspection client authentication by private_key_jwt (RFC 7523 §2.2, §3)', () => {
  it('sends client_id and a fresh assertion (iss = sub = client_id, aud = the endpoint, 60 s, unique jti), no secret', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = JSON.stringify({ ...(await exportJWK(privateKey)), kid: 'gw-key' });
    const request = createIntrospectionClient(
      introspectionSettings(as.endpoint, { clientSecret: undefined, privateKey: new Secret(jwk) }),
      { fetch, now: () => START },
    );
    await request('opaque-token-1', AbortSignal.timeout(5_000));
    await request('opaque-token-2', AbortSignal.timeout(5_000));

    const [first, second] = as.calls;
    expect(first?.authorization).toBeUndefined();
    expect(first?.form.get('client_id')).toBe('gateway');
    expect(first?.form.get('client_secret')).toBeNull();
    expect(first?.form.get('client_assertion_type')).toBe('urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    const verified = await jwtVerify(first?.form.get('client_assertion') ?? '', publicKey, {
      issuer: 'gateway',
      subject: 'gateway',
      audience: as.endpoint.href,
      currentDate: new Date(START),
    });
    expect(verified.protectedHeader).toMatchObject({ alg: 'ES256', kid: 'gw-key' });
    expect(verified.payload.exp).toBe(START / 1000 + 60);
    const again = await jwtVerify(second?.form.get('client_assertion') ?? '', publicKey, { currentDate: new Date(START) });
    expect(again.payload.jti).not.toBe(verified.payload.jti);
  });

  it('client_secret_basic and client_secret_post are unchanged', async () => {
    await createIntrospectionClient(introspectionSettings(as.endpoint), { fetch, now: Date.now })('t1', AbortSignal.timeout(5_000));
    expect(as.calls[0]?.authorization).toMatch(/^Basic /);
    expect(as.calls[0]?.form.get('client_assertion')).toBeNull();
    await createIntrospectionClient(introspectionSettings(as.endpoint, { authMethod: 'client_secret_post' }), { fetch, now: Date.now })(
      't2',
      AbortSignal.timeout(5_000),
    );
    expect(as.calls[1]?.authorization).toBeUndefined();
    expect(as.calls[1]?.form.get('client_id')).toBe('gateway');
    expect(as.calls[1]?.form.get('client_secret')).not.toBeNull();
  });
});
