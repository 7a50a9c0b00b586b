import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LevelWithSilent } from 'pino';

type LogMethod = (...args: unknown[]) => void;

/**
 * A request's logger (`request.log`) that makes its pino child, with the request id bound, the first time it is
 * used. fastify makes one child per request; most requests never log through it (their audit line goes through
 * the root logger), and a child costs its bindings serialised and censored: about 1.5 % of the gateway's CPU per
 * request at 64 connections (bench/README.md).
 */
class LazyRequestLogger implements FastifyBaseLogger {
  #made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #logger(): FastifyBaseLogger {
    return (this.#made ??= this.parent.child(this.bindings, this.options));
  }

  #forward(level: LevelWithSilent, args: unknown[]): void {
    const logger = this.#logger();
    const method: LogMethod = logger[level];
    method.apply(logger, args);
  }

  get level(): string {
    return this.#made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  fatal(...args: unknown[]): void {
    this.#forward('fatal', args);
  }

  error(...args: unknown[]): void {
    this.#forward('error', args);
  }

  warn(...args: unknown[]): void {
    this.#forward('warn', args);
  }

  info(...args: unknown[]): void {
    this.#forward('info', args);
  }

  debug(...args: unknown[]): void {
    this.#forward('debug', args);
  }

  trace(...args: unknown[]): void {
    this.#forward('trace', args);
  }

  silent(...args: unknown[]): void {
    this.#forward('silent', args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }
}

/** fastify's `childLoggerFactory` for every listener: request loggers made on first use. */
export function lazyRequestLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options);
}
