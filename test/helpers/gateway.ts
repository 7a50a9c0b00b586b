import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createRouteVerifier } from '../../src/auth/route-verifier.js';
import { createMemoryStore } from '../../src/cache/memory-store.js';
import type { CacheStore } from '../../src/cache/store.js';
import { parseConfig } from '../../src/config/load.js';
import type { CompiledConfig } from '../../src/config/types.js';
import { createLogger } from '../../src/observability/logger.js';
import { buildServer, type Gateway } from '../../src/server.js';

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

/** Builds the real gateway from YAML and listens on 127.0.0.1, port 0, capturing its logs. */
export async function startGateway(
  yaml: string,
  options: { env?: NodeJS.ProcessEnv; cache?: CacheStore; logLevel?: 'info' | 'debug' | 'trace' } = {},
): Promise<RunningGateway> {
  const config = compileOrThrow(yaml, options.env);
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      logs.push(chunk.toString('utf8'));
      callback();
    },
  });
  const logger = createLogger({ level: options.logLevel ?? 'trace', destination });
  const cache = options.cache ?? createMemoryStore();
  const keySecret = randomBytes(32);
  const gateway = await buildServer(config, {
    logger,
    cache,
    verifierFor: (route) => createRouteVerifier(route, { store: cache, keySecret, logger }),
  });
  await gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (gateway.app.server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, gateway, config, logs, close: () => gateway.close() };
}
