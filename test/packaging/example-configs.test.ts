import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
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

describe('config/nginx, config/envoy, config/traefik: the decision listener examples', () => {
  const env = { CALC_UPSTREAM_TOKEN: 'calc-upstream-token', DECISION_SECRET: 's'.repeat(40) };
  const text = (name: string) => readFileSync(configFile(name), 'utf8');

  it.each([
    ['nginx/gateway.yaml', 'nginx'],
    ['envoy/gateway.yaml', 'envoy'],
    ['traefik/gateway.yaml', 'traefik'],
  ])('%s loads with the decision listener for %s on 127.0.0.1:8181, its secret from the environment, its proxy trusted', (name, proxy) => {
    const config = load(name, env);
    expect(config.decision).toMatchObject({ host: '127.0.0.1', port: 8181, proxy });
    expect(config.decision?.secret?.reveal()).toBe(env.DECISION_SECRET);
    expect(config.trustedProxies.trusts('127.0.0.1')).toBe(true);
    expect(config.routes.map((route) => route.path)).toEqual(['/calc/mcp']);
  });

  it.each(['nginx/nginx.conf', 'nginx/nginx-with-body.conf', 'envoy/envoy.yaml', 'traefik/dynamic.yaml'])('%s sends the decision secret on every question', (name) => {
    expect(text(name)).toContain('REPLACE-WITH-THE-GATEWAY-DECISION-SECRET');
  });

  it('envoy.yaml agrees with its gateway config: path_prefix, body size, decision port, headers that carry the verdict', () => {
    const gateway = load('envoy/gateway.yaml', env);
    const envoy = JSON.stringify(parseYaml(text('envoy/envoy.yaml')));
    expect(envoy).toContain(`"path_prefix":"${gateway.decision?.pathPrefix ?? ''}"`);
    expect(envoy).toContain(`"max_request_bytes":${gateway.limits.maxBodyBytes}`);
    expect(envoy).toContain('"failure_mode_allow":false');
    expect(envoy).toContain('"allow_partial_message":false');
    expect(envoy).toContain('"port_value":8181');
    expect(envoy).toContain('"use_remote_address":true');
    for (const header of ['authorization', 'www-authenticate', 'retry-after']) expect(envoy).toContain(`{"exact":"${header}"}`);
  });

  it('traefik dynamic.yaml agrees with its gateway config: forwardAuth with the body, its own X-Forwarded-*, the verdict headers', () => {
    const gateway = load('traefik/gateway.yaml', env);
    const dynamic = parseYaml(text('traefik/dynamic.yaml')) as TraefikDynamic;
    const { forwardAuth } = dynamic.http.middlewares['mcp-decision'] ?? {};
    expect(forwardAuth).toMatchObject({ address: 'http://127.0.0.1:8181/', trustForwardHeader: false, forwardBody: true, maxBodySize: gateway.limits.maxBodyBytes });
    expect(forwardAuth?.authResponseHeaders).toEqual(['Authorization', 'X-Gateway-Identity']);
    expect(forwardAuth?.authRequestHeaders).not.toContain('X-Original-Uri');
    expect(dynamic.http.routers['mcp-calc']?.middlewares).toEqual(['mcp-decision-secret', 'mcp-decision', 'mcp-upstream-headers']);
  });

  // The gateway's proxy mode forwards an allowlist; a shipped proxy example must not pass on what it drops.
  const NEVER_UPSTREAM = ['proxy-authorization', 'cookie', 'x-mcp-decision-secret', 'x-forwarded-user', 'x-auth-request-email', 'x-authenticated-userid', 'x-consumer-username', 'x-original-url', 'x-http-method-override'];

  it('nginx forwards an allowlist (client headers off, each forwarded one named)', () => {
    const headers = text('nginx/mcp-upstream-headers.conf');
    expect(headers).toContain('proxy_pass_request_headers off;');
    for (const config of ['nginx/nginx.conf', 'nginx/nginx-with-body.conf']) expect(text(config)).toContain('include mcp-upstream-headers.conf;');
    for (const name of NEVER_UPSTREAM) expect(headers.toLowerCase()).not.toContain(`proxy_set_header ${name} $`);
  });

  it('envoy removes every such header on the protected route (the verdict removes the client credentials)', () => {
    const envoy = text('envoy/envoy.yaml');
    for (const name of NEVER_UPSTREAM.filter((header) => !['proxy-authorization', 'cookie'].includes(header))) expect(envoy).toContain(`- ${name}\n`);
  });

  it('traefik removes every such header after the decision', () => {
    const dynamic = parseYaml(text('traefik/dynamic.yaml')) as TraefikDynamic;
    const removed = Object.entries(dynamic.http.middlewares['mcp-upstream-headers']?.headers?.customRequestHeaders ?? {});
    const names = removed.filter(([, value]) => value === '').map(([name]) => name.toLowerCase());
    for (const name of NEVER_UPSTREAM) expect(names).toContain(name);
  });
});

interface TraefikDynamic {
  readonly http: {
    readonly routers: Record<string, { readonly middlewares?: string[] }>;
    readonly middlewares: Record<
      string,
      {
        readonly forwardAuth?: Record<string, unknown> & { readonly authResponseHeaders?: string[]; readonly authRequestHeaders?: string[] };
        readonly headers?: { readonly customRequestHeaders?: Record<string, string> };
      }
    >;
  };
}
