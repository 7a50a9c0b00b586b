import { z } from 'zod';
import type { Milliseconds } from '../../duration.js';
import { duration } from '../../fields.js';

/** `routes[].rate_limit`: a token bucket per principal. */

export const rateLimitSchema = z
  .strictObject({
    requests: z.number().int().positive().describe('Requests allowed per principal per period (token bucket size).'),
    per: duration('1m', 'The period in which `requests` are refilled.', { min: 1_000 }),
  })
  .describe('Per-principal rate limit (token bucket). Default: none.');

/** Token bucket per principal: `requests` tokens, refilled evenly over `per`. */
export interface RateLimitSettings {
  readonly requests: number;
  readonly per: Milliseconds;
}

export function compileRateLimit(raw: z.output<typeof rateLimitSchema> | undefined): RateLimitSettings | undefined {
  return raw && { requests: raw.requests, per: raw.per };
}
