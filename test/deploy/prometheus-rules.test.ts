import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { createGatewayMetrics } from '../../src/observability/metrics.js';
import { ALERTS_PATH, dashboardQueries, promtool, readsOf, shippedAlerts, shippedDashboard } from '../helpers/prometheus.js';

/**
 * The shipped alert rules (deploy/prometheus/alerts.yaml) and dashboard (deploy/grafana/mcp-auth-gateway.json) checked
 * by Debian's promtool: valid rules, every alert unit-tested on synthetic series, every dashboard query parsed, and
 * every series and label they read exported by the gateway.
 */

const PROMTOOL_TESTS = fileURLToPath(new URL('alerts.promtool.yaml', import.meta.url));
const alerts = shippedAlerts().groups.flatMap((group) => group.rules);
const queries = dashboardQueries();

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcpgw-rules-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('alert rules', () => {
  it('pass promtool check rules', () => {
    const result = promtool(['check', 'rules', ALERTS_PATH]);
    expect(result.output).toContain(`SUCCESS: ${alerts.length} rules found`);
    expect(result.status).toBe(0);
  });

  it('pass their promtool unit tests (test/deploy/alerts.promtool.yaml)', () => {
    const result = promtool(['test', 'rules', PROMTOOL_TESTS]);
    expect(result.output).toContain('SUCCESS');
    expect(result.status).toBe(0);
  });

  it('every alert has a unit test in which it fires', () => {
    const tests = parse(readFileSync(PROMTOOL_TESTS, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const firing = new Set(tests.tests.flatMap((test) => (test.alert_rule_test ?? []).filter((rule) => rule.exp_alerts.length > 0).map((rule) => rule.alertname)));
    expect(alerts.map((rule) => rule.alert).filter((name) => !firing.has(name))).toEqual([]);
  });

  it('every alert has a severity, a summary and a description', () => {
    for (const rule of alerts) {
      expect(rule.labels?.severity, rule.alert).toMatch(/^(critical|warning)$/);
      expect(rule.annotations?.summary, rule.alert).toEqual(expect.any(String));
      expect(rule.annotations?.description, rule.alert).toEqual(expect.any(String));
    }
  });
});

describe('dashboard', () => {
  it('has queries in every panel that is not a row', () => {
    const panels = shippedDashboard().panels.filter((panel) => panel.type !== 'row');
    expect(panels.filter((panel) => (panel.targets ?? []).length === 0).map((panel) => panel.title)).toEqual([]);
    expect(queries.length).toBeGreaterThan(10);
  });

  it('every query parses (promtool check rules on a throwaway rule file, one recording rule per query)', async () => {
    const file = join(dir, 'dashboard-queries.yaml');
    const rules = queries.map(({ expr }, index) => ({ record: `dashboard:query_${index}`, expr }));
    await writeFile(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
    const result = promtool(['check', 'rules', file]);
    expect(result.output).toContain(`SUCCESS: ${queries.length} rules found`);
    expect(result.status).toBe(0);
  });

  it('a query that does not parse is caught by the same check (the check can fail)', async () => {
    const file = join(dir, 'broken-query.yaml');
    await writeFile(file, stringify({ groups: [{ name: 'dashboard', rules: [{ record: 'dashboard:broken', expr: 'sum by (route (rate(x[1m]))' }] }] }));
    expect(promtool(['check', 'rules', file]).status).not.toBe(0);
  });
});

/** A metric family's series names, each with the label names it carries. */
function exportedSeries(): Map<string, ReadonlySet<string>> {
  const series = new Map<string, ReadonlySet<string>>();
  const scrapeLabels = ['job', 'instance'];
  for (const metric of createGatewayMetrics().registry.getMetricsAsArray()) {
    const { name, labelNames = [] } = metric as unknown as { name: string; labelNames?: string[] };
    const labels = [...scrapeLabels, ...labelNames];
    const type = (metric as unknown as { type?: string }).type;
    if (type === 'histogram') {
      series.set(`${name}_bucket`, new Set([...labels, 'le']));
      series.set(`${name}_count`, new Set(labels));
      series.set(`${name}_sum`, new Set(labels));
    } else if (type === 'summary') {
      series.set(name, new Set([...labels, 'quantile']));
    } else {
      series.set(name, new Set(labels));
    }
  }
  return series;
}

describe('alert rules and dashboard read only what the gateway exports', () => {
  const exported = exportedSeries();
  const expressions = [...alerts.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })), ...queries.map(({ panel, expr }) => ({ where: `panel ${panel}`, expr }))];

  it.each(expressions)('$where', ({ expr }) => {
    const { names, matched, grouped } = readsOf(expr);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !exported.has(name))).toEqual([]);
    expect(matched.filter(([name, label]) => !exported.get(name)?.has(label))).toEqual([]);
    const available = new Set(names.flatMap((name) => [...(exported.get(name) ?? [])]));
    expect(grouped.filter((label) => !available.has(label))).toEqual([]);
  });

  it('the check catches a renamed series and a label the series lacks', () => {
    const renamed = readsOf('rate(mcp_gateway_request_total[5m])');
    expect(renamed.names.filter((name) => !exported.has(name))).toEqual(['mcp_gateway_request_total']);
    const wrongLabel = readsOf('sum by (route) (rate(mcp_gateway_introspection_cache_total{route="calc"}[5m]))');
    expect(wrongLabel.matched.filter(([name, label]) => !exported.get(name)?.has(label))).toEqual([['mcp_gateway_introspection_cache_total', 'route']]);
  });
});
