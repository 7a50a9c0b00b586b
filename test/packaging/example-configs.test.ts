import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { CompiledConfig } from '../../src/config/types.js';

const configFile = (name: string) => fileURLToPath(new URL(`../../config/${name}`, import.meta.url));

/** Every ${env:NAME} the Kubernetes example references, as its Secret would provide them. */
const KUBERNETES_ENV = {
  REDIS_URL: 'redis://redis.example.svc:6379',
  CACHE_KEY_SECRET: 'k'.repeat(40),
  INTROSPECTION_SECRET: 'introspection-secret',
  CALC_UPSTREAM_TOKEN: 'calc-upstream-token',
};

function load(name: string, env: NodeJS.ProcessEnv): CompiledConfig {
  const result = parseConfig(readFileSync(configFile(name), 'utf8'), { env, source: name });
  if (!result.ok) throw new Error(`${name}: ${result.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  return result.config;
}

describe('config/sidecar.yaml', () => {
  const config = load('sidecar.yaml', {});

  it('puts one JWT route in front of the MCP container on localhost', () => {
    expect(config.routes).toHaveLength(1);
    const [route] = config.routes;
    expect(route?.upstream.url.href).toBe('http://127.0.0.1:3000/mcp');
    expect(route?.tokens.jwt?.issuer).toBeDefined();
    expect(route?.tokens.introspection).toBeUndefined();
  });

  it('listens on the pod IP and exposes the admin listener to Prometheus', () => {
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(config.admin.host).toBe('0.0.0.0');
    expect(config.admin.port).toBe(9090);
  });

  it('drains within the default Kubernetes termination grace period (30 s)', () => {
    expect(config.shutdown.gracePeriod).toBeLessThan(30_000);
  });
});

describe('config/kubernetes.yaml', () => {
  it('loads with its Secret-provided environment and shares the cache through Redis', () => {
    const config = load('kubernetes.yaml', KUBERNETES_ENV);
    expect(config.cache.redisUrl).toBeDefined();
    expect(config.admin.host).toBe('0.0.0.0');
    expect(config.routes.map((route) => route.name)).toEqual(['calc', 'notes']);
  });

  it('keeps every secret out of the file: without the environment each reference is reported', () => {
    const result = parseConfig(readFileSync(configFile('kubernetes.yaml'), 'utf8'), { env: {} });
    expect(result.ok).toBe(false);
    const messages = result.ok ? '' : result.problems.map((problem) => problem.message).join('\n');
    for (const name of Object.keys(KUBERNETES_ENV)) expect(messages).toContain(name);
  });
});

describe('config/nginx and config/envoy: the decision listener examples', () => {
  const env = { CALC_UPSTREAM_TOKEN: 'calc-upstream-token' };

  it.each(['nginx/gateway.yaml', 'envoy/gateway.yaml'])('%s loads with the decision listener on 127.0.0.1:8181', (name) => {
    const config = load(name, env);
    expect(config.decision).toMatchObject({ host: '127.0.0.1', port: 8181 });
    expect(config.routes.map((route) => route.path)).toEqual(['/calc/mcp']);
  });

  it('envoy.yaml agrees with its gateway config: path_prefix, body size, decision port, headers that carry the verdict', async () => {
    const { parse } = await import('yaml');
    const gateway = load('envoy/gateway.yaml', env);
    const envoy = JSON.stringify(parse(readFileSync(configFile('envoy/envoy.yaml'), 'utf8')));
    expect(envoy).toContain(`"path_prefix":"${gateway.decision?.pathPrefix ?? ''}"`);
    expect(envoy).toContain(`"max_request_bytes":${gateway.limits.maxBodyBytes}`);
    expect(envoy).toContain('"failure_mode_allow":false');
    expect(envoy).toContain('"allow_partial_message":false');
    expect(envoy).toContain('"port_value":8181');
    for (const header of ['authorization', 'www-authenticate', 'retry-after']) expect(envoy).toContain(`{"exact":"${header}"}`);
  });
});
