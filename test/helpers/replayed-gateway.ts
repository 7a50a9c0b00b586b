import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import type { assembleGateway } from '../../src/gateway/assemble.js';
import type { createCacheStore } from '../../src/gateway/cache-store.js';
import type { CacheStore } from '../../src/cache/store.js';
import type { parseConfig } from '../../src/config/load.js';
import type { Gateway } from '../../src/gateway/build.js';
import type { UpstreamBehaviour } from './upstream.js';

/**
 * A gateway built from some checkout's code (this tree's, or another's for before/after figures), with the store
 * its config describes, listening on 127.0.0.1; and the MCP requests the store replays send through it.
 */
export interface GatewayCode {
  readonly parseConfig: typeof parseConfig;
  readonly assembleGateway: typeof assembleGateway;
  readonly createCacheStore: typeof createCacheStore;
}

export interface ReplayedGateway {
  /** The MCP endpoint of `path`. */
  readonly url: string;
  readonly store: CacheStore;
  readonly gateway: Gateway;
}

export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'store-replay', version: '0' } },
});
export const PING = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });

/** An upstream that opens a new session on every initialize and answers everything else. */
export const opensSessions: UpstreamBehaviour = (request, response) => {
  response.setHeader('content-type', 'application/json');
  if (request.body.includes('"initialize"')) response.setHeader('mcp-session-id', randomUUID());
  response.end(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }));
};

/** Logs nothing; closing is the caller's (`gateway.close()`). */
export async function startReplayedGateway(code: GatewayCode, yaml: string, path: string, env: NodeJS.ProcessEnv = {}): Promise<ReplayedGateway> {
  const parsed = code.parseConfig(yaml, { env });
  if (!parsed.ok) throw new Error(`replay config invalid: ${JSON.stringify(parsed.problems)}`);
  const logger = pino({ level: 'silent' });
  const store = code.createCacheStore(parsed.config.cache, logger);
  const gateway = code.assembleGateway(parsed.config, { logger, cache: store });
  await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  return { url: `http://127.0.0.1:${(gateway.app.server.address() as AddressInfo).port}${path}`, store, gateway };
}

/** A JSON-RPC POST with `bearer` (and the session, when given); the body is read so the connection is reused. */
export async function postMcp(url: string, bearer: string, body: string, session?: string): Promise<Response> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(session === undefined ? {} : { 'mcp-session-id': session }),
    },
    body,
  });
  await response.arrayBuffer();
  return response;
}
