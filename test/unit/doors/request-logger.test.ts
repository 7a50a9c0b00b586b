import fastify from 'fastify';
import { describe, expect, it, onTestFinished } from 'vitest';
import { lazyRequestLogger } from '../../../src/doors/shared/request-logger.js';
import { captureLogs } from '../../helpers/capture-logs.js';

const CANARY = 'eyJhbGciOiJFUzI1NiJ9.CANARY.c2ln';

/** The gateway's logger, with its `child` counted. */
function countedLogger() {
  const captured = captureLogs();
  const { logger } = captured;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called below with each logger as `this`
  const child = logger.child;
  let children = 0;
  logger.child = function (this: typeof logger, bindings, options) {
    children += 1;
    return child.call(this, bindings, options);
  } as typeof logger.child;
  return { ...captured, children: () => children };
}

describe('lazyRequestLogger', () => {
  it('makes no child for a request that logs nothing, and one child however often it logs', () => {
    const { logger, lines, children } = countedLogger();
    const quiet = lazyRequestLogger(logger, { reqId: 'quiet' }, {});
    expect(quiet.level).toBe('trace');
    expect(children()).toBe(0);

    const busy = lazyRequestLogger(logger, { reqId: 'r1' }, {});
    busy.warn({ reason: 'x' }, 'first');
    busy.info('second %s', 'line');
    busy.child({ part: 'inner' }).error('third');
    expect(children()).toBe(2); // the request's child once, the explicit child of it once
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ reqId: 'r1', reason: 'x', msg: 'first', level: 40 }),
      expect.objectContaining({ reqId: 'r1', msg: 'second line', level: 30 }),
      expect.objectContaining({ reqId: 'r1', part: 'inner', msg: 'third', level: 50 }),
    ]);
  });

  it('keeps the child options (a route log level) and censors the bindings as every child does', () => {
    const { logger, lines } = countedLogger();
    const routeLogger = lazyRequestLogger(logger, { reqId: 'r2', token: CANARY }, { level: 'warn' });
    expect(routeLogger.level).toBe('warn');
    routeLogger.info('dropped');
    routeLogger.warn('kept');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(CANARY);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ reqId: 'r2', token: '[Redacted]', msg: 'kept' });
  });

  it('is what fastify hands a request as request.log: its lines carry the request id', async () => {
    const { logger, lines, children } = countedLogger();
    const app = fastify({ loggerInstance: logger, childLoggerFactory: lazyRequestLogger, disableRequestLogging: true, genReqId: () => 'req-7' });
    onTestFinished(() => app.close());
    app.get('/quiet', () => 'ok');
    app.get('/noisy', (request) => {
      request.log.warn('something to say');
      return 'ok';
    });
    await app.ready();
    const atStart = children();
    await app.inject('/quiet');
    expect(children()).toBe(atStart);
    await app.inject('/noisy');
    expect(children()).toBe(atStart + 1);
    expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({ reqId: 'req-7', msg: 'something to say' });
  });
});
