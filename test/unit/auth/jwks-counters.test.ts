import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JWKS_MAX_AGE_MS } from '../../../src/auth/jwks-source.js';
import { createJwtVerifier } from '../../../src/auth/jwt-verifier.js';
import type { JwtSettings } from '../../../src/config/types.js';
import { compileJwtSettings } from '../../helpers/gateway.js';
import { startTestIssuer, type TestIssuer } from '../../helpers/issuer.js';

const RESOURCE = 'https://gw.example.test/calc/mcp';

let issuer: TestIssuer;

beforeEach(async () => {
  issuer = await startTestIssuer();
});

afterEach(() => issuer.close());

function settings(): JwtSettings {
  return compileJwtSettings(
    issuer.issuer,
    `{ issuer: ${issuer.issuer}, jwks_uri: ${issuer.jwksUri}, algorithms: [ES256], jwks_stale_window: 10m, max_lifetime: 24h }`,
  );
}

describe('JWKS metrics hooks', () => {
  it('I3 JWKS down with a warm cache: tokens still validate; the failed refresh (with its reason) and the stale serve are counted', async () => {
    let now = Date.now();
    const refreshes: string[] = [];
    let refreshed = (): void => undefined;
    let staleServes = 0;
    const verifier = createJwtVerifier(settings(), {
      now: () => now,
      counters: {
        jwksRefresh: (result, reason) => {
          refreshes.push(reason === undefined ? result : `${result}:${reason}`);
          refreshed();
        },
        jwksStaleServe: () => void staleServes++,
      },
    });
    await verifier.warm();
    expect(refreshes).toEqual(['success']);

    issuer.setJwksDown(true);
    now += JWKS_MAX_AGE_MS + 1_000;
    const mint = () => issuer.mint({ aud: RESOURCE }, { expiresIn: 3 * 3600 });
    const renewal = new Promise<void>((resolve) => (refreshed = resolve));
    // The first request past max age starts the renewal in the background and is not counted as stale: nothing failed yet.
    await expect(verifier.verify(await mint())).resolves.toMatchObject({ tokenKind: 'jwt' });
    await renewal;
    await expect(verifier.verify(await mint())).resolves.toMatchObject({ tokenKind: 'jwt' });
    await verifier.close();
    expect(refreshes).toEqual(['success', 'failure:jwks_status']);
    expect(staleServes).toBe(1);
  });
});
