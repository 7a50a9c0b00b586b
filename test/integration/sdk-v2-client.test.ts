import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completeConsentHeadlessly } from '../../examples/demo/headless-consent.js';
import { HeadlessOAuthClientProvider } from '../../examples/demo/headless-oauth-provider.js';
import { startDemoStackOnFreePorts, type DemoStack } from '../../examples/demo/stack.js';
import { connectSdkV2 } from '../clients/drivers/sdk-v2.js';
import { firstText } from '../clients/drivers/results.js';
import { captureLogs } from '../helpers/capture-logs.js';

/**
 * The official SDK v2 client (`@modelcontextprotocol/client`, as applications use it: `versionNegotiation: auto`,
 * so `server/discover` first on every connection, RFC 9207 `iss` checked) through every route kind of the demo.
 */
let stack: DemoStack;
const logs = captureLogs();

beforeAll(async () => {
  stack = await startDemoStackOnFreePorts({ logger: logs.logger });
});

afterAll(async () => {
  await stack.close();
});

const routeUrl = (path: string) => new URL(`${stack.gatewayUrl}${path}`);
const provider = (refreshTokens = false) => new HeadlessOAuthClientProvider({ redirectUrl: 'http://127.0.0.1/v2/callback', clientName: 'sdk v2 test', refreshTokens });

/** The audit lines of server/discover requests on a route. */
function discoveries(route: string): { status?: number }[] {
  return logs.lines
    .map((line) => JSON.parse(line) as { msg?: string; route?: string; jsonrpc_method?: string; status?: number })
    .filter((line) => line.msg === 'audit' && line.route === route && line.jsonrpc_method === 'server/discover');
}

async function text(path: string, tool: string, args: Record<string, number>, client = provider()): Promise<string | undefined> {
  const connection = await connectSdkV2(routeUrl(path), client, 'sdk v2 test');
  try {
    return firstText(await connection.authorized((mcp) => mcp.callTool({ name: tool, arguments: args })));
  } finally {
    await connection.client.close();
  }
}

describe('the SDK v2 client through every route kind (server/discover first)', () => {
  it.each([false, true])('JWT route, refresh tokens %s: add; multiply after the step-up to calc:write; server/discover reached the route', async (refreshTokens) => {
    const connection = await connectSdkV2(routeUrl('/calc/mcp'), provider(refreshTokens), 'sdk v2 test');
    try {
      const call = (name: string, args: Record<string, number>) => connection.authorized((mcp) => mcp.callTool({ name, arguments: args }));
      expect(firstText(await call('add', { a: 2, b: 3 }))).toBe('5');
      expect(firstText(await call('multiply', { x: 6, y: 7 }))).toBe('42');
    } finally {
      await connection.client.close();
    }
    expect(discoveries('calc').length).toBeGreaterThan(0);
  });

  it('introspection route (opaque tokens): add', async () => {
    expect(await text('/calc-opaque/mcp', 'add', { a: 2, b: 3 })).toBe('5');
    expect(discoveries('calc-opaque').length).toBeGreaterThan(0);
  });

  it('upfront_scopes route: multiply without a step-up', async () => {
    expect(await text('/calc-upfront/mcp', 'multiply', { x: 6, y: 7 })).toBe('42');
  });

  it('per-user grant route: server/discover and initialize are answered with the consent link in the error the client throws; after consent it connects and list_notes answers', async () => {
    const client = provider();
    const error: unknown = await text('/notes/mcp', 'list_notes', {}, client).then(
      () => new Error('answered without a grant'),
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    const link = /https?:\/\/\S+\/consent\/connect\?link=[A-Za-z0-9_-]{43}/.exec((error as Error).message)?.[0];
    expect(link).toBeDefined();
    // Never the linkless 403 that kept 2026-07-28 clients from connecting at all.
    expect(discoveries('notes').map((line) => line.status)).not.toContain(403);
    expect(discoveries('notes').length).toBeGreaterThan(0);
    expect(await completeConsentHeadlessly(new URL(link ?? ''), { decision: 'allow' })).toMatchObject({ heading: 'Connected' });
    expect(await text('/notes/mcp', 'list_notes', {}, client)).toBe('(no notes)');
  });
});
