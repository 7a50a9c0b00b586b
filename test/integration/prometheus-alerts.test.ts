import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { jwtRoute, startJwtStack, type JwtStack } from '../helpers/jwt-stack.js';
import { listenAdmin, scrape } from '../helpers/metrics.js';
import { freePort } from '../helpers/net.js';
import { eventually as poll } from '../helpers/poll.js';
import { dashboardQueries, prometheusBinary, readsOf, shippedAlerts } from '../helpers/prometheus.js';

/**
 * A real Prometheus (Debian's package; `.ci/run` installs it) scrapes a running gateway and evaluates the shipped
 * alert rules. The test's copy of deploy/prometheus/alerts.yaml differs in one way only: every `for:` is 1s, and
 * Prometheus scrapes and evaluates every second, so an alert fires within seconds instead of minutes. The
 * expressions and thresholds are the shipped ones.
 */

const PUBLIC = 'https://gw.example.test';
const CALC = `${PUBLIC}/calc/mcp`;

let stack: JwtStack;
let admin: string;
let dir: string;
let prometheus: ChildProcess | undefined;
let prometheusUrl: string;
let prometheusLog = '';

/** Waits for Prometheus to show `what`; its log tail in the error otherwise. */
const eventually = <T>(what: string, probe: () => Promise<T | undefined>, step?: () => Promise<void>): Promise<T> =>
  poll(`${what} in Prometheus`, probe, { step, context: () => `its log:\n${prometheusLog.slice(-4000)}` });

async function prometheusApi<T>(path: string): Promise<T | undefined> {
  try {
    const response = await fetch(`${prometheusUrl}${path}`);
    if (response.status !== 200) return undefined;
    return ((await response.json()) as { data: T }).data;
  } catch {
    return undefined;
  }
}

interface ActiveAlert {
  readonly labels: Record<string, string>;
  readonly state: 'pending' | 'firing';
}

const firing = async (name: string, route: string): Promise<ActiveAlert | undefined> =>
  (await prometheusApi<{ alerts: ActiveAlert[] }>('/api/v1/alerts'))?.alerts.find(
    (alert) => alert.labels.alertname === name && alert.labels.route === route && alert.state === 'firing',
  );

/** A tools/call on route calc, with `token` as bearer when given; its status. */
async function call(token?: string): Promise<number> {
  const response = await fetch(`${stack.gw.url}/calc/mcp`, {
    method: 'POST',
    headers: {
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add' } }),
  });
  await response.arrayBuffer();
  return response.status;
}

beforeAll(async () => {
  const binary = prometheusBinary();
  stack = await startJwtStack((target) => `
public_url: ${PUBLIC}
routes:
${jwtRoute('calc', target)}
`);
  admin = await listenAdmin(stack.gw.gateway);
  dir = await mkdtemp(join(tmpdir(), 'mcpgw-prometheus-'));
  const shipped = shippedAlerts();
  const groups = shipped.groups.map((group) => ({ ...group, rules: group.rules.map((rule) => (rule.for ? { ...rule, for: '1s' } : rule)) }));
  await writeFile(join(dir, 'alerts.yaml'), stringify({ groups }));
  await writeFile(
    join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [join(dir, 'alerts.yaml')],
      scrape_configs: [{ job_name: 'mcp-auth-gateway', static_configs: [{ targets: [new URL(admin).host] }] }],
    }),
  );
  const port = await freePort();
  prometheusUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(binary, [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ]);
  prometheus.stderr?.on('data', (chunk: Buffer) => {
    prometheusLog += chunk.toString();
  });
  await eventually('a ready server', async () => ((await fetch(`${prometheusUrl}/-/ready`).catch(() => undefined))?.status === 200 ? true : undefined));
});

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus?.once('exit', resolve));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the shipped alert rules in a real Prometheus scraping a running gateway', () => {
  it('loads every shipped rule, and the gateway is scraped', async () => {
    const rules = await eventually('the rule groups', () => prometheusApi<{ groups: { rules: { name: string; health: string }[] }[] }>('/api/v1/rules'));
    const loaded = rules.groups.flatMap((group) => group.rules);
    expect(loaded.map((rule) => rule.name).sort()).toEqual(shippedAlerts().groups.flatMap((group) => group.rules.map((rule) => rule.alert)).sort());
    const target = await eventually('the gateway target up', async () => {
      const targets = await prometheusApi<{ activeTargets: { health: string; labels: Record<string, string> }[] }>('/api/v1/targets');
      return targets?.activeTargets.find((candidate) => candidate.health === 'up');
    });
    expect(target.labels.job).toBe('mcp-auth-gateway');
  });

  it('the running gateway exports every series the rules and the dashboard read', async () => {
    const families = new Set([...(await scrape(admin)).text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name = '', type]) =>
      type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name],
    ));
    const expressions = [...shippedAlerts().groups.flatMap((group) => group.rules.map((rule) => rule.expr)), ...dashboardQueries().map(({ expr }) => expr)];
    const read = new Set(expressions.flatMap((expr) => readsOf(expr).names));
    expect([...read].filter((name) => !families.has(name))).toEqual([]);
  });

  it('while the JWKS endpoint is down, McpGatewayAuthUnavailable and McpGatewayHigh5xxRate fire for the route', async () => {
    // Before the outage: traffic is scraped (a call without a token, which fetches no keys) and nothing fires.
    expect(await call()).toBe(401);
    await eventually('a scraped 401', async () => {
      const result = await prometheusApi<{ result: unknown[] }>('/api/v1/query?query=' + encodeURIComponent('mcp_gateway_requests_total{route="calc",outcome="401"}'));
      return result && result.result.length > 0 ? true : undefined;
    });
    expect(await firing('McpGatewayAuthUnavailable', 'calc')).toBeUndefined();

    // The JWKS endpoint goes down before the gateway ever fetched it: valid tokens cannot be verified → 503.
    stack.issuer.setJwksDown(true);
    const token = await stack.issuer.mint({ aud: CALC });
    const statuses = new Set<number>();
    const send = async () => {
      statuses.add(await call(token));
    };
    const alert = await eventually('McpGatewayAuthUnavailable firing for route calc', () => firing('McpGatewayAuthUnavailable', 'calc'), send);
    expect(alert.labels).toMatchObject({ alertname: 'McpGatewayAuthUnavailable', route: 'calc', severity: 'critical' });
    expect([...statuses]).toEqual([503]);
    const fiveXx = await eventually('McpGatewayHigh5xxRate firing for route calc', () => firing('McpGatewayHigh5xxRate', 'calc'), send);
    expect(fiveXx.labels.severity).toBe('critical');
    stack.issuer.setJwksDown(false);
  }, 90_000);
});
