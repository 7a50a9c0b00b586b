import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

/** The shipped alert rules and dashboard (deploy/), and Debian's Prometheus tools that check them. */

export const ALERTS_PATH = fileURLToPath(new URL('../../deploy/prometheus/alerts.yaml', import.meta.url));
export const DASHBOARD_PATH = fileURLToPath(new URL('../../deploy/grafana/mcp-auth-gateway.json', import.meta.url));

const INSTALL_HINT = 'apt-get install prometheus (Debian\'s package brings prometheus and promtool; .ci/run installs it)';

function binary(name: string): string {
  const found = [`/usr/bin/${name}`, `/usr/local/bin/${name}`].find((path) => spawnSync(path, ['--version']).status === 0);
  if (!found) throw new Error(`${name} is not installed: ${INSTALL_HINT}`);
  return found;
}

export const prometheusBinary = (): string => binary('prometheus');

/** Runs promtool; its exit status and both outputs. */
export function promtool(args: readonly string[]): { readonly status: number | null; readonly output: string } {
  const result = spawnSync(binary('promtool'), args, { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

export interface RuleFile {
  readonly groups: readonly { readonly name: string; interval?: string; readonly rules: AlertRule[] }[];
}

export const shippedAlerts = (): RuleFile => parse(readFileSync(ALERTS_PATH, 'utf8')) as RuleFile;

interface DashboardPanel {
  readonly type: string;
  readonly title: string;
  readonly targets?: readonly { readonly expr: string }[];
}

export interface Dashboard {
  readonly panels: readonly DashboardPanel[];
  readonly templating: { readonly list: readonly { readonly name: string; readonly definition?: string }[] };
}

export const shippedDashboard = (): Dashboard => JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as Dashboard;

/** Grafana's variables replaced by values Prometheus accepts, so a dashboard query can be parsed or run. */
export function withoutGrafanaVariables(expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '1h').replaceAll('$job', '.*').replaceAll('$route', '.*');
}

/** Every query of the dashboard's panels, by panel title, variables replaced. */
export function dashboardQueries(dashboard = shippedDashboard()): { readonly panel: string; readonly expr: string }[] {
  return dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: withoutGrafanaVariables(target.expr) })));
}

const SELECTOR = /\b((?:mcp_gateway|process|nodejs)_[a-zA-Z0-9_]+)\s*(\{[^}]*\})?/g;
const MATCHER = /([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g;
const GROUPING = /\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g;

/** Series names read, label names matched, and label names grouped by, in one PromQL expression. */
export function readsOf(expr: string): { names: string[]; matched: [string, string][]; grouped: string[] } {
  const names: string[] = [];
  const matched: [string, string][] = [];
  for (const [, name = '', selector = ''] of expr.matchAll(SELECTOR)) {
    names.push(name);
    for (const [, label = ''] of selector.matchAll(MATCHER)) matched.push([name, label]);
  }
  const grouped = [...expr.matchAll(GROUPING)].flatMap(([, list = '']) => list.split(',').map((label) => label.trim()).filter(Boolean));
  return { names, matched, grouped };
}
