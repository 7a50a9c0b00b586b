import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload, type CryptoKey } from 'jose';

export interface TestIssuer {
  readonly issuer: string;
  readonly jwksUri: string;
  /** Requests received, by path (JWKS fetches, metadata lookups). */
  readonly hits: Map<string, number>;
  /** Signs an access token; defaults: typ at+jwt, aud = the given resource, exp in 5 minutes, iat now. */
  mint(claims: JWTPayload & { aud: string | string[] }, options?: { header?: Record<string, unknown>; expiresIn?: number }): Promise<string>;
  /** Makes the JWKS endpoint answer 503 (true) or serve keys again (false). */
  setJwksDown(down: boolean): void;
  close(): Promise<void>;
}

/** A minimal real authorization-server side for JWT routes: RFC 8414 metadata and a JWKS, keys made per run. */
export async function startTestIssuer(): Promise<TestIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const kid = 'test-key-1';
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
  const hits = new Map<string, number>();
  let jwksDown = false;
  let base = '';

  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/.well-known/oauth-authorization-server') {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks`, response_types_supported: ['code'] }));
    } else if (path === '/jwks' && !jwksDown) {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ keys: [publicJwk] }));
    } else {
      response.statusCode = path === '/jwks' ? 503 : 404;
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const sign = (key: CryptoKey, claims: JWTPayload, header: Record<string, unknown>, expiresIn: number) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ iss: base, iat: now, exp: now + expiresIn, sub: 'user-1', client_id: 'client-1', ...claims })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid, ...header })
      .sign(key);
  };

  return {
    issuer: base,
    jwksUri: `${base}/jwks`,
    hits,
    mint: (claims, options = {}) => sign(privateKey, claims, options.header ?? {}, options.expiresIn ?? 300),
    setJwksDown: (down) => {
      jwksDown = down;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
