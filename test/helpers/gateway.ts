import type { AddressInfo } from 'node:net';
import { assembleGateway } from '../../src/gateway/assemble.js';
import { createMemoryStore } from '../../src/cache/memory-store.js';
import type { CacheStore } from '../../src/cache/store.js';
import { parseConfig } from '../../src/config/load.js';
import type { CompiledConfig, JwtSettings } from '../../src/config/types.js';
import type { Gateway } from '../../src/gateway/build.js';
import { captureLogs } from './capture-logs.js';

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  readonly gateway: Gateway;
  readonly config: CompiledConfig;
  /** Every log line the gateway wrote, as raw JSON text. */
  readonly logs: string[];
  close(): Promise<void>;
}

export function compileOrThrow(yaml: string, env: NodeJS.ProcessEnv = {}): CompiledConfig {
  const result = parseConfig(yaml, { env });
  if (!result.ok) {
    throw new Error(`test config invalid:\n${result.problems.map((p) => `${p.path}: ${p.message}`).join('\n')}`);
  }
  return result.config;
}

/** The compiled `tokens.jwt` of a one-route config whose jwt block is `jwt` (YAML), with the defaults filled in. */
export function compileJwtSettings(issuer: string, jwt: string): JwtSettings {
  const compiled = compileOrThrow(`
public_url: https://gw.example.test
routes:
  - name: calc
    path: /calc/mcp
    upstream: { url: "http://127.0.0.1:9/mcp" }
    authorization_servers: [${issuer}]
    tokens: { jwt: ${jwt} }
`).routes[0]?.tokens.jwt;
  if (!compiled) throw new Error('no jwt settings');
  return compiled;
}

/** Builds the real gateway from YAML and listens on 127.0.0.1, port 0, capturing its logs. */
export async function startGateway(
  yaml: string,
  options: { env?: NodeJS.ProcessEnv; cache?: CacheStore } = {},
): Promise<RunningGateway> {
  const config = compileOrThrow(yaml, options.env);
  const { logger, lines: logs } = captureLogs();
  const gateway = assembleGateway(config, { logger, cache: options.cache ?? createMemoryStore() });
  await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (gateway.app.server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, gateway, config, logs, close: () => gateway.close() };
}
