import { z } from 'zod';

/** `log`: how much the gateway logs, and how audit lines name the caller. */

export const logSchema = z
  .strictObject({
    level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('Log level. Default: info.'),
    audit_subject: z
      .enum(['clear', 'hashed'])
      .default('clear')
      .describe(
        'How audit lines name the caller: clear (<issuer>#<subject>) or hashed (a keyed digest, HMAC with cache.key_secret, equal to the grant audit lines\' principal digest; stable across replicas sharing that secret). Default: clear.',
      ),
  })
  .prefault({})
  .describe('Logging.');

type RawLog = z.output<typeof logSchema>;

export interface LogSettings {
  readonly logLevel: RawLog['level'];
  /** How audit lines name the caller (`log.audit_subject`). */
  readonly auditSubject: RawLog['audit_subject'];
}

export function compileLog(raw: RawLog): LogSettings {
  return { logLevel: raw.level, auditSubject: raw.audit_subject };
}
