import type { Logger } from 'pino';
import { createLogger } from '../../src/observability/logger.js';

/** The gateway's real logger (with its redaction), writing every line into `lines` as raw JSON text. */
export function captureLogs(): { readonly logger: Logger; readonly lines: string[]; readonly text: () => string } {
  const lines: string[] = [];
  const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void lines.push(line) } });
  return { logger, lines, text: () => lines.join('') };
}
