import { pino, stdSerializers, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

/**
 * Keys whose value is printed as `[Redacted]` at the top level of a log line or one level down (`headers.cookie`,
 * `upstream.token`), and in any `*.headers` object (`req.headers.authorization`). The request/response serializers
 * below log no headers at all; this is the second line of defence for anything logged by hand or by a library.
 */
export const SENSITIVE_KEYS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'token',
  'access_token',
  'client_secret',
  'password',
]);

export const CENSOR = '[Redacted]';

/** How long a buffered log line may wait for 4 KB of company before it is written anyway. */
const LOG_FLUSH_INTERVAL_MS = 250;

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null;
}

/** A shallow copy that keeps the prototype, so `toJSON` and class-specific printing still apply. */
function shallowCopy(fields: Fields): Fields {
  return Object.assign(Object.create(Object.getPrototypeOf(fields) as object | null) as Fields, fields);
}

/**
 * `fields` with every sensitive key censored, looking into nested objects while `depth` allows (one more level
 * under a `headers` key). Copies an object only when one of its keys needs censoring: a clean line allocates
 * nothing. `skip` names keys left alone here because their serializer's output is censored instead.
 */
function censored(fields: Fields, depth: number, skip?: ReadonlySet<string>): Fields {
  let copy: Fields | undefined;
  for (const key in fields) {
    if (!Object.hasOwn(fields, key) || skip?.has(key) === true) continue;
    const value = fields[key];
    const looksInside = isObject(value) && depth >= 0 && (depth > 0 || key === 'headers');
    const replacement = SENSITIVE_KEYS.has(key) ? CENSOR : looksInside ? censored(value, depth - 1) : value;
    if (replacement === value) continue;
    copy ??= shallowCopy(fields);
    copy[key] = replacement;
  }
  return copy ?? fields;
}

/**
 * Fields the gateway builds itself from a fixed set of keys, none of them sensitive, with no objects among the
 * values (the audit line, once per request): redaction matches keys, so the walk has nothing to find and skips
 * them. Subclasses are checked by test/unit/observability/audit.test.ts.
 */
export class VettedFields {}

/** A log line's fields (or a child logger's bindings) with sensitive keys censored; the same object when clean. */
export function redactFields(fields: Fields): Fields {
  if (fields instanceof VettedFields) return fields;
  return censored(fields, 1, SERIALIZED_KEYS);
}

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

/**
 * pino applies serializers after `formatters.log`, so the fields they own are censored on their output (a level
 * below the line, with the `headers` rule): an error's own properties such as `err.token` are caught there.
 */
const SERIALIZERS = {
  req: (req: SerializableRequest) => ({ id: req.id, method: req.method, url: redactUrl(req.url ?? '') }),
  res: (res: SerializableResponse) => ({ statusCode: res.statusCode }),
  err: (err: Error) => {
    const serialized: unknown = stdSerializers.err(err);
    return isObject(serialized) ? censored(serialized, 0) : serialized;
  },
};
const SERIALIZED_KEYS: ReadonlySet<string> = new Set(Object.keys(SERIALIZERS));

export interface LoggerOptions {
  readonly level: LevelWithSilent;
  /** Default: stdout, in batches of 4 KB of lines (written every LOG_FLUSH_INTERVAL_MS at the latest, and on exit). */
  readonly destination?: DestinationStream;
}

/** Lines held before they are written: one `write(2)` per batch instead of per line. */
const BATCH_CHARS = 4096;

/**
 * Holds log lines and hands them to `sink` joined, once BATCH_CHARS have gathered, every LOG_FLUSH_INTERVAL_MS,
 * and on `flushSync`. sonic-boom's own buffering (`minLength`) appends to one growing string and measures its
 * UTF-8 length on every line: flattening up to 4 KB per line cost more than formatting the line.
 */
export class LineBatch implements DestinationStream {
  #lines: string[] = [];
  #chars = 0;

  constructor(readonly sink: BatchSink) {}

  write(line: string): void {
    this.#lines.push(line);
    this.#chars += line.length;
    if (this.#chars >= BATCH_CHARS) this.flush();
  }

  flush(): void {
    if (this.#lines.length === 0) return;
    const batch = this.#lines.join('');
    this.#lines = [];
    this.#chars = 0;
    this.sink.write(batch);
  }

  /** Called by pino after `fatal`, and on exit. */
  flushSync(): void {
    this.flush();
    this.sink.flushSync();
  }
}

/** Where a batch goes: sonic-boom writing stdout synchronously, without buffering of its own. */
export interface BatchSink {
  write(batch: string): unknown;
  flushSync(): void;
}

/** Batched destinations in use; their lines are written out when the process exits, however it exits. */
const batches = new Set<LineBatch>();
let exitFlushInstalled = false;

function flushBatchesOnExit(): void {
  for (const batch of batches) {
    try {
      batch.flushSync();
    } catch {
      // Exiting anyway, and there is nowhere left to report a failed log write.
    }
  }
}

/**
 * One `write(2)` per line costs more than formatting the line; batching trades it for losing at most 4 KB of
 * lines on a hard kill. The writes stay synchronous: an asynchronous write goes through libuv's thread pool, and
 * on a gateway limited to one core those thread hops cost more than the write (bench/README.md). pino registers
 * no exit flush for a synchronous destination, so this module does, once, for every `process.exit`, the end of
 * the event loop and a crash alike; pino itself flushes after `fatal`.
 */
function bufferedStdout(): DestinationStream {
  const batch = new LineBatch(pino.destination({ dest: 1, sync: true }));
  setInterval(() => batch.flush(), LOG_FLUSH_INTERVAL_MS).unref();
  if (!exitFlushInstalled) {
    process.on('exit', flushBatchesOnExit);
    exitFlushInstalled = true;
  }
  batches.add(batch);
  return batch;
}

/**
 * pino gives a child logger's bindings none of our formatters (it resets `formatters.bindings` for children), so
 * they are censored on the way in. Children are created with `Object.create(parent)`: they inherit this `child`.
 */
function redactingChildBindings(logger: Logger): Logger {
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with the right `this`
  const pinoChild = logger.child;
  logger.child = function (this: Logger, bindings, options) {
    return pinoChild.call(this, redactFields(bindings), options);
  } as Logger['child'];
  return logger;
}

export function createLogger(options: LoggerOptions): Logger {
  const logger = pino(
    {
      level: options.level,
      // Instead of pino's `redact`, which clones every nested object of every line (half the gateway's log cost).
      formatters: { log: redactFields },
      serializers: SERIALIZERS,
    },
    options.destination ?? bufferedStdout(),
  );
  return redactingChildBindings(logger);
}
