import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { compactVerify, createRemoteJWKSet, customFetch, decodeJwt, decodeProtectedHeader, errors, type JWTPayload } from 'jose';
import type { Check } from './check.js';
import { SPEC } from './check.js';
import { isSecureOrLoopback } from './resource-identifier.js';

/** What the token is checked against: what discovery found. */
export interface TokenExpectations {
  /** The audience the token must carry: the protected resource metadata's `resource` (or the server URL). */
  readonly resource: string;
  /** Each discovered authorization server's issuer and JWKS URL, in the metadata's order. */
  readonly authorizationServers: readonly { readonly issuer: string; readonly jwksUri?: string }[];
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** Fetches the JWKS: the run's recording fetch, so its address policy and time limit apply. */
  readonly fetch: FetchLike;
}

interface DecodedJwt {
  readonly header: { readonly alg?: string; readonly typ?: string; readonly kid?: string };
  readonly payload: JWTPayload;
}

/** The header and claims of a compact JWS, or undefined for anything else (an opaque token, a JWE). */
function decode(token: string): DecodedJwt | undefined {
  if (token.split('.').length !== 3) return undefined;
  try {
    return { header: decodeProtectedHeader(token), payload: decodeJwt(token) };
  } catch {
    return undefined;
  }
}

function formatCheck({ header }: DecodedJwt): Check {
  const described = `JWT (alg ${header.alg ?? 'none'}${header.typ === undefined ? '' : `, typ ${header.typ}`})`;
  return header.typ?.toLowerCase() === 'at+jwt' || header.typ?.toLowerCase() === 'application/at+jwt'
    ? { id: 'token-format', status: 'pass', message: described, spec: SPEC.tokenFormat }
    : { id: 'token-format', status: 'warn', message: `${described}: RFC 9068 access tokens carry typ at+jwt`, spec: SPEC.tokenFormat };
}

function issuerCheck({ payload }: DecodedJwt, expected: TokenExpectations): Check {
  const issuers = expected.authorizationServers.map((server) => server.issuer);
  if (payload.iss !== undefined && issuers.includes(payload.iss)) {
    return { id: 'token-issuer', status: 'pass', message: `iss is ${payload.iss}`, spec: SPEC.tokenIssuer };
  }
  return {
    id: 'token-issuer',
    status: 'fail',
    message: `iss ${payload.iss ?? '(missing)'} is not the resource's authorization server (${issuers.join(', ') || 'none discovered'})`,
    spec: SPEC.tokenIssuer,
  };
}

function audienceCheck({ payload }: DecodedJwt, expected: TokenExpectations): Check {
  const audiences = payload.aud === undefined ? [] : [payload.aud].flat();
  return audiences.includes(expected.resource)
    ? { id: 'token-audience', status: 'pass', message: `aud contains ${expected.resource}`, spec: SPEC.tokenAudience }
    : {
        id: 'token-audience',
        status: 'fail',
        message: `aud (${audiences.join(', ') || 'missing'}) does not contain ${expected.resource}: the server must reject it`,
        spec: SPEC.tokenAudience,
      };
}

function lifetimeCheck({ payload }: DecodedJwt, now: number): Check {
  const seconds = Math.floor(now / 1000);
  const at = (epoch: number) => new Date(epoch * 1000).toISOString();
  if (payload.exp === undefined) {
    return { id: 'token-lifetime', status: 'fail', message: 'no exp claim (RFC 9068 §2.2 requires one)', spec: SPEC.tokenLifetime };
  }
  if (payload.exp <= seconds) {
    return { id: 'token-lifetime', status: 'fail', message: `expired at ${at(payload.exp)}, ${seconds - payload.exp} s ago`, spec: SPEC.tokenLifetime };
  }
  if (payload.nbf !== undefined && payload.nbf > seconds) {
    return { id: 'token-lifetime', status: 'fail', message: `not valid before ${at(payload.nbf)}, in ${payload.nbf - seconds} s`, spec: SPEC.tokenLifetime };
  }
  return { id: 'token-lifetime', status: 'pass', message: `valid for ${payload.exp - seconds} s more (until ${at(payload.exp)})`, spec: SPEC.tokenLifetime };
}

function signatureFailure(error: unknown, jwksUri: string): string {
  if (error instanceof errors.JWKSNoMatchingKey) return `no key in ${jwksUri} matches the token's header (kid, alg)`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return `the signature does not verify with the key from ${jwksUri}`;
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) return `the token's alg cannot be verified`;
  if (error instanceof errors.JWKSTimeout) return `${jwksUri} did not answer in time`;
  // A failed fetch: its cause says why (an address refused, a connection refused, a time limit).
  if (error instanceof TypeError && error.cause instanceof Error) return `${jwksUri} could not be fetched: ${error.cause.message}`;
  return `${jwksUri} could not be used: ${error instanceof Error ? error.message : String(error)}`;
}

/** The signature against the JWKS of the authorization server named by `iss` (else the first one discovered). */
async function signatureCheck(token: string, { payload }: DecodedJwt, expected: TokenExpectations): Promise<Check> {
  const server = expected.authorizationServers.find((candidate) => candidate.issuer === payload.iss) ?? expected.authorizationServers[0];
  const jwksUri = server?.jwksUri;
  if (jwksUri === undefined) {
    return { id: 'token-signature', status: 'warn', message: 'no jwks_uri in the authorization server metadata: signature not checked', spec: SPEC.tokenSignature };
  }
  if (!isSecureOrLoopback(jwksUri)) {
    return { id: 'token-signature', status: 'fail', message: `jwks_uri ${jwksUri} is neither https nor loopback: not fetched`, spec: SPEC.tokenSignature };
  }
  try {
    const keys = createRemoteJWKSet(new URL(jwksUri), { [customFetch]: expected.fetch });
    await compactVerify(token, keys);
    return { id: 'token-signature', status: 'pass', message: `signature verified with a key from ${jwksUri}`, spec: SPEC.tokenSignature };
  } catch (error) {
    return { id: 'token-signature', status: 'fail', message: signatureFailure(error, jwksUri), spec: SPEC.tokenSignature };
  }
}

/**
 * Step 6, before the token is sent: a JWT's claims against what discovery found (iss, aud, exp/nbf) and its
 * signature against the authorization server's JWKS. An opaque token can only be checked by its authorization
 * server (introspection), which a client cannot do. The token is never part of a message.
 */
export async function tokenChecks(token: string, expected: TokenExpectations): Promise<Check[]> {
  const jwt = decode(token);
  if (jwt === undefined) {
    return [
      {
        id: 'token-format',
        status: 'warn',
        message: 'not a JWT (opaque or encrypted): its issuer, audience and lifetime can only be checked by introspection at the authorization server',
        spec: SPEC.tokenFormat,
      },
    ];
  }
  return [
    formatCheck(jwt),
    issuerCheck(jwt, expected),
    audienceCheck(jwt, expected),
    lifetimeCheck(jwt, expected.now),
    await signatureCheck(token, jwt, expected),
  ];
}
