import { z } from 'zod';
import type { Milliseconds } from '../../duration.js';
import { duration } from '../../fields.js';

/** `routes[].sessions`: Mcp-Session-Id bound to the principal that opened the session. */

export const sessionsSchema = z
  .strictObject({
    bind: z
      .boolean()
      .default(true)
      .describe('Bind each Mcp-Session-Id to the principal (issuer, subject, client id) that opened it. Default: true.'),
    idle_ttl: duration('30m', 'A binding unused this long expires; its session id is then refused.', { min: 1_000 }),
  })
  .prefault({})
  .describe('MCP session binding.');

export interface SessionSettings {
  /** Bind Mcp-Session-Id to the principal that opened the session. */
  readonly bind: boolean;
  /** A binding unused this long expires. */
  readonly idleTtl: Milliseconds;
}

export function compileSessions(raw: z.output<typeof sessionsSchema>): SessionSettings {
  return { bind: raw.bind, idleTtl: raw.idle_ttl };
}
