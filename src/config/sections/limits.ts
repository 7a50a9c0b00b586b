import { z } from 'zod';
import type { Milliseconds } from '../duration.js';
import { duration } from '../fields.js';

/** `limits`: the most one request, and one principal, may take of a gateway process. */

export const limitsSchema = z
  .strictObject({
    max_body_bytes: z.number().int().positive().default(1_048_576).describe('Largest POST body. Default: 1048576.'),
    max_token_bytes: z.number().int().positive().default(8192).describe('Longest bearer token. Default: 8192.'),
    body_timeout: duration(
      '30s',
      'Longest time to receive a whole request, headers and body (then 408 and the connection is closed). Streams the gateway sends are not limited by it.',
      { min: 1_000, max: 600_000 },
    ),
    header_timeout: duration('10s', 'Longest time to receive the request headers; at most body_timeout.', { min: 1_000, max: 600_000 }),
    max_streams_per_principal: z
      .number()
      .int()
      .positive()
      .default(64)
      .describe('Standalone SSE streams (GET) one user (issuer and subject, through every client; a client without a subject on its own) may hold open on this gateway process; beyond: 429. POSTs, streamed answers included, count against max_concurrent_requests_per_principal instead. Default: 64.'),
    max_concurrent_requests_per_principal: z
      .number()
      .int()
      .positive()
      .default(256)
      .describe('POST and DELETE requests one user (counted like max_streams_per_principal) may have in flight at the upstream on this gateway process, an answer streamed as SSE until it ends; beyond: 429. Default: 256.'),
  })
  .superRefine((value, ctx) => {
    if (value.header_timeout > value.body_timeout) {
      ctx.addIssue({ code: 'custom', path: ['header_timeout'], message: 'must not be longer than body_timeout' });
    }
  })
  .prefault({})
  .describe('Request limits.');

export interface LimitSettings {
  /** Largest accepted POST body; larger → 413. */
  readonly maxBodyBytes: number;
  /** Longest accepted bearer token; longer → 401 invalid_token without decoding. */
  readonly maxTokenBytes: number;
  /** Longest time to receive a whole request (Node's requestTimeout); then 408 and the connection closes. */
  readonly bodyTimeout: Milliseconds;
  /** Longest time to receive the request headers (Node's headersTimeout). */
  readonly headerTimeout: Milliseconds;
  /** Standalone (GET) SSE streams one principal may hold open on this process; beyond → 429. */
  readonly maxStreamsPerPrincipal: number;
  /** POST/DELETE requests one principal may have in flight at upstreams on this process; beyond → 429. */
  readonly maxConcurrentRequestsPerPrincipal: number;
}

export function compileLimits(raw: z.output<typeof limitsSchema>): LimitSettings {
  return {
    maxBodyBytes: raw.max_body_bytes,
    maxTokenBytes: raw.max_token_bytes,
    bodyTimeout: raw.body_timeout,
    headerTimeout: raw.header_timeout,
    maxStreamsPerPrincipal: raw.max_streams_per_principal,
    maxConcurrentRequestsPerPrincipal: raw.max_concurrent_requests_per_principal,
  };
}
