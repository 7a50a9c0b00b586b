import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { pino, type Logger } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { Secret } from '../../../src/config/secret.js';
import {
  CENSOR,
  createLogger,
  LineBatch,
  redactFields,
  redactUrl,
  SENSITIVE_KEYS,
} from '../../../src/observability/logger.js';
import { captureLogs } from '../../helpers/capture-logs.js';

const CANARY = 'eyJhbGciOiJFUzI1NiJ9.CANARY.c2ln';

describe('logger redaction', () => {
  it.each([
    ['req.headers.authorization', { req: { url: '/mcp', headers: { authorization: `Bearer ${CANARY}` } } }],
    ['req.headers.cookie', { req: { url: '/mcp', headers: { cookie: `session=${CANARY}` } } }],
    ['req.headers["proxy-authorization"]', { req: { url: '/mcp', headers: { 'proxy-authorization': `Bearer ${CANARY}` } } }],
    ['res.headers["set-cookie"]', { res: { statusCode: 200, headers: { 'set-cookie': `session=${CANARY}` } } }],
  ])('H5 %s never prints: request/response serializers log no headers at all', (_path, fields) => {
    const { logger, text } = captureLogs();
    logger.info(fields, 'request');
    expect(text()).not.toContain(CANARY);
    expect(text()).not.toContain('headers');
  });

  it.each([
    ['headers.authorization', { headers: { authorization: `Bearer ${CANARY}` } }],
    ['token', { token: CANARY }],
    ['client_secret', { client_secret: CANARY }],
    ['nested access_token', { upstream: { access_token: CANARY } }],
  ])('H5 %s prints [Redacted]', (_path, fields) => {
    const { logger, text } = captureLogs();
    logger.info(fields, 'something happened');
    expect(text()).not.toContain(CANARY);
    expect(text()).toContain('[Redacted]');
  });

  it('H5 a resolved Secret logs as a placeholder', () => {
    const { logger, text } = captureLogs();
    logger.info({ upstreamCredential: new Secret(CANARY) }, 'credential loaded');
    expect(text()).not.toContain(CANARY);
    expect(text()).toContain('[secret]');
  });

  it('H2 the request serializer logs the path and hides the query string', () => {
    const { logger, text } = captureLogs();
    logger.info({ req: { id: 'r1', method: 'POST', url: `/calc/mcp?access_token=${CANARY}` } }, 'incoming request');
    expect(text()).not.toContain(CANARY);
    expect((JSON.parse(text()) as { req: unknown }).req).toEqual({ id: 'r1', method: 'POST', url: '/calc/mcp?[redacted]' });
  });

  it.each([
    ['/calc/mcp', '/calc/mcp'],
    ['/calc/mcp?', '/calc/mcp?[redacted]'],
    ['/calc/mcp?a=1&access_token=x', '/calc/mcp?[redacted]'],
  ])('redactUrl(%j) → %j', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe('redaction without pino redact', () => {
  const sensitive = [...SENSITIVE_KEYS];
  const parsed = (text: string) => JSON.parse(text) as Record<string, unknown>;

  it('H5 the sensitive keys are exactly those the gateway promises to hide', () => {
    expect(sensitive.sort()).toEqual(['access_token', 'authorization', 'client_secret', 'cookie', 'password', 'proxy-authorization', 'set-cookie', 'token']);
  });

  it.each(sensitive)('H5 %s at the top level prints [Redacted]', (key) => {
    const { logger, text } = captureLogs();
    logger.info({ [key]: CANARY, route: 'calc' }, 'line');
    expect(text()).not.toContain(CANARY);
    expect(parsed(text())).toMatchObject({ [key]: CENSOR, route: 'calc' });
  });

  it.each(sensitive)('H5 %s one level down (headers.* and any *.%s) prints [Redacted]', (key) => {
    const { logger, text } = captureLogs();
    logger.info({ headers: { [key]: CANARY, accept: 'text/event-stream' }, upstream: { [key]: CANARY, status: 502 } }, 'line');
    expect(text()).not.toContain(CANARY);
    expect(parsed(text())).toMatchObject({ headers: { [key]: CENSOR, accept: 'text/event-stream' }, upstream: { [key]: CENSOR, status: 502 } });
  });

  it.each(sensitive)('H5 %s in a nested headers object (request.headers.*) prints [Redacted]', (key) => {
    const { logger, text } = captureLogs();
    logger.info({ request: { method: 'POST', headers: { [key]: CANARY } } }, 'line');
    expect(text()).not.toContain(CANARY);
    expect(parsed(text())).toMatchObject({ request: { method: 'POST', headers: { [key]: CENSOR } } });
  });

  it('H5 req.headers.authorization and res.headers["set-cookie"] never print, whatever the serializers keep', () => {
    const fields = { req: { url: '/mcp', headers: { authorization: CANARY } }, res: { statusCode: 200, headers: { 'set-cookie': CANARY } } };
    const { logger, text } = captureLogs();
    logger.info(fields, 'request');
    expect(text()).not.toContain(CANARY);
    expect(parsed(text())).toMatchObject({ req: { url: '/mcp' }, res: { statusCode: 200 } });
  });

  it('H5 child-logger bindings are redacted; clean bindings print as given', () => {
    const { logger, text } = captureLogs();
    logger.child({ reqId: 'r1', token: CANARY, upstream: { client_secret: CANARY } }).info('bound');
    expect(text()).not.toContain(CANARY);
    expect(parsed(text())).toMatchObject({ reqId: 'r1', token: CENSOR, upstream: { client_secret: CENSOR }, msg: 'bound' });
  });

  it('H5 an error keeps type, message and stack; its own sensitive properties print [Redacted]', () => {
    const { logger, lines } = captureLogs();
    const error = Object.assign(new TypeError('upstream refused'), { token: CANARY, headers: { authorization: CANARY }, code: 'E_UP' });
    logger.error({ err: error }, 'failed');
    logger.error(error);
    expect(lines.join('')).not.toContain(CANARY);
    for (const line of lines) {
      const { err } = parsed(line) as { err: Record<string, unknown> };
      expect(err).toMatchObject({ type: 'TypeError', message: 'upstream refused', code: 'E_UP', token: CENSOR, headers: { authorization: CENSOR } });
      expect(err.stack).toContain('upstream refused');
    }
  });

  it('a clean line is not copied; a line with a secret is copied and the caller’s object is left as it was', () => {
    const clean = { route: 'calc', status: 200, upstream: { status_class: '2xx' }, headers: { accept: '*/*' }, req: { headers: { authorization: 'x' } } };
    expect(redactFields(clean)).toBe(clean);
    const dirty = { route: 'calc', upstream: { token: CANARY, status: 502 } };
    const redacted = redactFields(dirty);
    expect(redacted).not.toBe(dirty);
    expect(redacted.route).toBe('calc');
    expect(dirty.upstream.token).toBe(CANARY);
  });

  it('a censored copy keeps its prototype, so toJSON and class-specific printing still apply', () => {
    class Connection {
      password = CANARY;
      toJSON() {
        return { host: 'db', password: this.password };
      }
    }
    const { logger, text } = captureLogs();
    logger.info({ connection: new Connection() }, 'connected');
    expect(text()).not.toContain(CANARY);
    expect(parsed(text())).toMatchObject({ connection: { host: 'db', password: CENSOR } });
  });
});

describe('log destination', () => {
  const streamOf = (logger: Logger) => (logger as unknown as Record<symbol, Record<string, unknown>>)[pino.symbols.streamSym]!;

  it('by default writes stdout in batches of lines, without thread-pool writes or a buffer of sonic-boom’s own', () => {
    const stream = streamOf(createLogger({ level: 'info' }));
    expect(stream).toBeInstanceOf(LineBatch);
    expect((stream as unknown as LineBatch).sink).toMatchObject({ fd: 1, sync: true, minLength: 0 });
  });

  it('a batch goes out whole once 4 KB of lines gathered, in order; flushSync writes what is left and flushes the sink', () => {
    const writes: string[] = [];
    let sinkFlushes = 0;
    const batch = new LineBatch({ write: (text) => writes.push(text), flushSync: () => (sinkFlushes += 1) });
    const line = (index: number) => `${JSON.stringify({ index, pad: 'x'.repeat(90) })}\n`;
    const perBatch = Math.ceil(4096 / line(10).length);
    for (let index = 10; index < 10 + perBatch - 1; index += 1) batch.write(line(index));
    expect(writes).toEqual([]);
    batch.write(line(10 + perBatch - 1));
    expect(writes).toHaveLength(1);
    expect(writes[0]!.split('\n').filter(Boolean).map((text) => (JSON.parse(text) as { index: number }).index)).toEqual(
      Array.from({ length: perBatch }, (_, offset) => 10 + offset),
    );
    batch.write(line(99));
    batch.flushSync();
    expect(writes).toEqual([writes[0], line(99)]);
    expect(sinkFlushes).toBe(1);
    batch.flushSync();
    expect(writes).toHaveLength(2);
  });

  it('a given destination is used as it is', () => {
    const destination = { write: () => undefined };
    expect(streamOf(createLogger({ level: 'info', destination }))).toBe(destination);
  });

  /** Runs `script` (ESM, repository root) in a child process with tsx; stdout collected as it arrives. */
  function runScript(script: string) {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    const firstLine = new Promise<string>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout.includes('\n')) resolve(stdout);
      });
    });
    const exited = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout }));
    return { child, firstLine, exited };
  }

  it('a line logged on a quiet logger is written within the flush interval, not held until 4 KB accumulate', async () => {
    const { firstLine } = runScript(`
      import { createLogger } from './src/observability/logger.ts';
      createLogger({ level: 'info' }).info({ marker: 'quiet' }, 'alone');
      setInterval(() => undefined, 60_000);
    `);
    expect(JSON.parse(await firstLine)).toMatchObject({ marker: 'quiet', msg: 'alone' });
  });

  it('a line logged right before process.exit reaches stdout', async () => {
    const { exited } = runScript(`
      import { createLogger } from './src/observability/logger.ts';
      const logger = createLogger({ level: 'info' });
      logger.info({ marker: 'last words' }, 'exiting');
      process.exit(3);
    `);
    const { code, stdout } = await exited;
    expect(code).toBe(3);
    expect(JSON.parse(stdout)).toMatchObject({ marker: 'last words', msg: 'exiting' });
  });

  it('a line logged right before a crash (uncaught exception) reaches stdout', async () => {
    const { exited } = runScript(`
      import { createLogger } from './src/observability/logger.ts';
      createLogger({ level: 'info' }).info({ marker: 'before the crash' }, 'crashing');
      setImmediate(() => { throw new Error('boom'); });
    `);
    const { code, stdout } = await exited;
    expect(code).not.toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ marker: 'before the crash', msg: 'crashing' });
  });
});
