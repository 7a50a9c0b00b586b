import { z } from 'zod';
import { rule } from '../../fields.js';
import { immutableSet } from '../../freeze.js';
import { originProblem } from '../../rules.js';

/** `routes[].cors`: which browser origins may call the route. */

export const corsSchema = z
  .strictObject({
    allowed_origins: z
      .array(z.string().superRefine(rule((value: string) => (value === '*' ? undefined : originProblem(value)))))
      .min(1)
      .default(['*'])
      .superRefine(rule((origins: string[]) =>
        origins.includes('*') && origins.length > 1 ? 'must be exactly ["*"] or a list of origins' : undefined,
      ))
      .describe('["*"] or origins like https://app.example.com. Default: ["*"].'),
    max_age: z.number().int().nonnegative().default(600).describe('Preflight cache, seconds. Default: 600.'),
  })
  .prefault({})
  .describe('Browser access (CORS).');

export interface CorsSettings {
  /** `true` when `allowed_origins` is `["*"]` (the default): any Origin may call, tokens are not ambient. */
  readonly anyOrigin: boolean;
  /** Exact origins (`scheme://host[:port]`, lowercase) allowed when `anyOrigin` is false. */
  readonly allowedOrigins: ReadonlySet<string>;
  readonly maxAge: number;
}

export function compileCors(raw: z.output<typeof corsSchema>): CorsSettings {
  return {
    anyOrigin: raw.allowed_origins.includes('*'),
    allowedOrigins: immutableSet(raw.allowed_origins.filter((origin) => origin !== '*').map((origin) => origin.toLowerCase())),
    maxAge: raw.max_age,
  };
}
