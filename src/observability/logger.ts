import { pino, stdSerializers, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

/**
 * Paths pino replaces with `[Redacted]` wherever they appear in a log object. Request/response serializers below
 * already log no headers; these are a second line of defence for anything logged by hand or by a library.
 */
export const REDACTED_PATHS: readonly string[] = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["proxy-authorization"]',
  'headers.cookie',
  'authorization',
  'token',
  'access_token',
  'client_secret',
  'password',
  '*.authorization',
  '*.token',
  '*.access_token',
  '*.client_secret',
];

/** Path and a marker when a query string was present; never the query itself (it may carry `access_token`). */
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : `${url.slice(0, queryStart)}?[redacted]`;
}

interface SerializableRequest {
  readonly id?: unknown;
  readonly method?: string;
  readonly url?: string;
  readonly routeOptions?: unknown;
}

interface SerializableResponse {
  readonly statusCode?: number;
}

export interface LoggerOptions {
  readonly level: LevelWithSilent;
  readonly destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      level: options.level,
      redact: { paths: [...REDACTED_PATHS], censor: '[Redacted]' },
      serializers: {
        req: (req: SerializableRequest) => ({ id: req.id, method: req.method, url: redactUrl(req.url ?? '') }),
        res: (res: SerializableResponse) => ({ statusCode: res.statusCode }),
        err: stdSerializers.err,
      },
    },
    options.destination,
  );
}
