import { stringify } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import type { ConfigProblem, ConfigResult, ParseOptions } from '../../../src/config/load.js';
import type { CompiledConfig } from '../../../src/config/types.js';

/** The smallest valid configuration: one route, JWT validation, everything else defaulted. */
export function minimalConfig(): Record<string, unknown> {
  return {
    public_url: 'https://gw.example.com',
    routes: [
      {
        name: 'calc',
        path: '/calc/mcp',
        upstream: { url: 'http://127.0.0.1:3000/mcp' },
        authorization_servers: ['https://as.example.com'],
        tokens: { jwt: { issuer: 'https://as.example.com' } },
      },
    ],
  };
}

export const INTROSPECTION = {
  endpoint: 'https://as.example.com/introspect',
  client_id: 'gateway',
  client_secret: '${env:INTROSPECTION_SECRET}',
};

/**
 * `minimalConfig()` with dotted-path edits applied (`routes.0.tokens.jwt.issuer`); `undefined` deletes the key.
 */
export function configWith(edits: Record<string, unknown>, base = minimalConfig()): Record<string, unknown> {
  for (const [path, value] of Object.entries(edits)) {
    const keys = path.split('.');
    const last = keys.pop() ?? '';
    let node = base;
    for (const key of keys) {
      node[key] ??= {};
      node = node[key] as Record<string, unknown>;
    }
    if (value === undefined) delete node[last];
    else node[last] = structuredClone(value);
  }
  return base;
}

export function parseObject(config: unknown, options: ParseOptions = {}): ConfigResult {
  return parseConfig(stringify(config), { env: { INTROSPECTION_SECRET: 'introspection-secret' }, ...options });
}

export function compiled(result: ConfigResult): CompiledConfig {
  if (!result.ok) throw new Error(`expected a valid config, got ${JSON.stringify(result.problems, null, 2)}`);
  return result.config;
}

export function problems(result: ConfigResult): ConfigProblem[] {
  if (result.ok) throw new Error('expected problems, the config was accepted');
  return result.problems;
}
