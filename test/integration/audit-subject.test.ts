import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { principalDigest } from '../../src/cache/cache-keys.js';
import { afterQueued } from '../../src/observability/after-turn.js';
import { compileOrThrow } from '../helpers/gateway.js';
import { jwtRoute, setupJwtStack } from '../helpers/jwt-stack.js';

/**
 * `log.audit_subject: hashed` read from the gateway's real log lines, through both front doors (its proxy and the
 * decision listener), and switched back to `clear` by a reload.
 */

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;
const KEY = 'audit-subject-key-'.padEnd(40, 'k');
const SUBJECT = 'alice-subject-canary';
const env = { CACHE_KEY_SECRET: KEY };

const configYaml = (mode: string) => (target: Parameters<typeof jwtRoute>[1]) => `
public_url: ${PUBLIC}
decision: { port: 0, proxy: traefik, unauthenticated: true }
log: { audit_subject: ${mode} }
cache: { key_secret: "\${env:CACHE_KEY_SECRET}" }
routes:
${jwtRoute('calc', target)}
`;
const stack = setupJwtStack(configYaml('hashed'), { env });
let decisionUrl: string;

beforeAll(async () => {
  const decision = stack.gw.gateway.decision;
  if (!decision) throw new Error('decision listener not built');
  await decision.listen({ host: '127.0.0.1', port: 0 });
  decisionUrl = `http://127.0.0.1:${(decision.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await stack.gw.gateway.decision?.close();
});

type Line = Record<string, unknown>;
const auditLines = (): Line[] => stack.gw.logs.map((line) => JSON.parse(line) as Line).filter((line) => line.msg === 'audit');

async function callThroughProxy(): Promise<void> {
  const response = await fetch(`${stack.gw.url}/calc/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${await stack.issuer.mint({ aud: CALC, sub: SUBJECT })}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add' } }),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

describe('log.audit_subject', () => {
  it('hashed: the proxy\'s audit line names the caller by the keyed digest only', async () => {
    stack.gw.logs.length = 0;
    await callThroughProxy();
    const [line] = auditLines();
    expect(line).toMatchObject({ route: 'calc', principal: principalDigest(Buffer.from(KEY), stack.issuer.issuer, SUBJECT), outcome: 'ok' });
    expect(stack.gw.logs.join('')).not.toContain(SUBJECT);
  });

  it('hashed: the decision listener\'s audit line carries the same digest', async () => {
    stack.gw.logs.length = 0;
    const verdict = await fetch(`${decisionUrl}/`, {
      headers: {
        authorization: `Bearer ${await stack.issuer.mint({ aud: CALC, sub: SUBJECT })}`,
        'x-forwarded-method': 'GET',
        'x-forwarded-uri': '/calc/mcp',
        'x-forwarded-host': 'gw.example.test',
      },
    });
    expect(verdict.status).toBe(200);
    await afterQueued();
    const [line] = auditLines();
    expect(line).toMatchObject({ dialect: 'traefik', principal: principalDigest(Buffer.from(KEY), stack.issuer.issuer, SUBJECT) });
    expect(stack.gw.logs.join('')).not.toContain(SUBJECT);
  });

  it('a reload to clear names <issuer>#<subject> again', async () => {
    await stack.gw.gateway.reload(compileOrThrow(configYaml('clear')(stack), env));
    stack.gw.logs.length = 0;
    await callThroughProxy();
    expect(auditLines()[0]).toMatchObject({ principal: `${stack.issuer.issuer}#${SUBJECT}` });
  });
});
