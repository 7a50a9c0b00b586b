import { describe, expect, it } from 'vitest';
import { Secret } from '../../../src/config/secret.js';
import { redactUrl } from '../../../src/observability/logger.js';
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
