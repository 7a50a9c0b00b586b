import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { ALERTS_PATH, DASHBOARD_PATH } from '../helpers/prometheus.js';

/**
 * The chart rendered by a real `helm template` (helm 3; `.ci/run` installs it) and the manifests read back: what each
 * value turns on, and the combinations the chart refuses.
 */

const CHART_DIR = fileURLToPath(new URL('../../helm/mcp-auth-gateway/', import.meta.url));
const RELEASE = 'gw';
const NAMESPACE = 'mcp';
const FULLNAME = `${RELEASE}-mcp-auth-gateway`;
const GATEWAY_PODS = { 'app.kubernetes.io/name': 'mcp-auth-gateway', 'app.kubernetes.io/instance': RELEASE };

const HELM = ['/usr/local/bin/helm', '/usr/bin/helm'].find((path) => spawnSync(path, ['version', '--short']).status === 0);
const dir = mkdtempSync(join(tmpdir(), 'mcpgw-helm-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Manifest = { kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string> }; [key: string]: unknown };
type Tree = { [key: string]: unknown };

/** The value at `path` in a rendered manifest (array items by index), undefined where the path ends early. */
function at(tree: unknown, ...path: (string | number)[]): unknown {
  let node = tree;
  for (const key of path) node = typeof node === 'object' && node !== null ? (node as Record<string | number, unknown>)[key] : undefined;
  return node;
}

let renders = 0;
/** `helm template` with `values` (a values file); the manifests, or the error helm printed. */
function render(values: Tree = {}, flags: readonly string[] = []): { manifests: Manifest[]; error?: string } {
  if (!HELM) throw new Error('helm is not installed: .ci/run installs it (the helm 3 release binary); the chart is rendered for real here');
  renders += 1;
  const file = join(dir, `values-${renders}.yaml`);
  writeFileSync(file, stringify(values));
  const result = spawnSync(HELM, ['template', RELEASE, CHART_DIR, '--namespace', NAMESPACE, '--kube-version', '1.30.0', '-f', file, ...flags], { encoding: 'utf8' });
  if (result.status !== 0) return { manifests: [], error: result.stderr };
  const manifests = parseAllDocuments(result.stdout).map((document) => document.toJS() as Manifest).filter(Boolean);
  return { manifests };
}

function rendered(values: Tree = {}): Manifest[] {
  const { manifests, error } = render(values);
  if (error !== undefined) throw new Error(error);
  return manifests;
}

const refusal = (values: Tree, flags: readonly string[] = []): string => render(values, flags).error ?? '(rendered without error)';
const only = (manifests: Manifest[], kind: string, name?: string): Manifest => {
  const found = manifests.filter((manifest) => manifest.kind === kind && (name === undefined || manifest.metadata.name === name));
  expect(found, `${kind} ${name ?? ''}`).toHaveLength(1);
  return found[0] as Manifest;
};
const kinds = (manifests: Manifest[]) => manifests.map((manifest) => manifest.kind).sort();
const gatewayConfig = (manifests: Manifest[]): Tree => parse(at(only(manifests, 'ConfigMap', FULLNAME), 'data', 'config.yaml') as string) as Tree;
const chartValues = parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as { config: Tree };

describe('defaults', () => {
  const manifests = rendered();

  it('render no Ingress, NetworkPolicy, PrometheusRule or dashboard', () => {
    expect(kinds(manifests)).toEqual(['ConfigMap', 'Deployment', 'PodDisruptionBudget', 'Service', 'Service', 'ServiceAccount']);
  });

  it('spread replicas over nodes as a preference (a one-node cluster still schedules), selecting this release\'s pods', () => {
    const pod = at(only(manifests, 'Deployment'), 'spec', 'template');
    expect(at(pod, 'spec', 'topologySpreadConstraints')).toEqual([
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: GATEWAY_PODS } },
    ]);
    expect(at(pod, 'metadata', 'labels')).toMatchObject(GATEWAY_PODS);
  });

  it('write no trusted_proxies into the config (a gateway without the key still starts)', () => {
    expect(gatewayConfig(manifests)).not.toHaveProperty('trusted_proxies');
  });
});

describe('topology spread', () => {
  it('keeps an entry\'s own labelSelector, and a zone entry gets this release\'s pods', () => {
    const own = { matchLabels: { team: 'mcp' } };
    const deployment = only(
      rendered({
        topologySpreadConstraints: [
          { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' },
          { maxSkew: 2, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: own },
        ],
      }),
      'Deployment',
    );
    const constraints = at(deployment, 'spec', 'template', 'spec', 'topologySpreadConstraints') as Tree[];
    expect(constraints.map((entry) => entry.labelSelector)).toEqual([{ matchLabels: GATEWAY_PODS }, own]);
  });

  it('[] renders none', () => {
    expect(at(only(rendered({ topologySpreadConstraints: [] }), 'Deployment'), 'spec', 'template', 'spec')).not.toHaveProperty('topologySpreadConstraints');
  });
});

describe('trustedProxies', () => {
  it('is written into the config as trusted_proxies when not empty', () => {
    const proxies = ['10.42.0.0/16', 'fd00::/8'];
    expect(gatewayConfig(rendered({ trustedProxies: proxies })).trusted_proxies).toEqual(proxies);
  });

  it('refuses trustedProxies together with config.trusted_proxies', () => {
    const config = { ...chartValues.config, trusted_proxies: ['10.0.0.0/8'] };
    // Past the values schema, which takes the gateway's config schema (it may not know the key yet): the chart's guard.
    expect(refusal({ trustedProxies: ['10.42.0.0/16'], config }, ['--skip-schema-validation'])).toContain('set trustedProxies or config.trusted_proxies, not both');
  });

  it.each([['not an address', ['ingress']], ['a hostname', ['proxy.example.com/32']]])('refuses %s', (_case, proxies) => {
    expect(refusal({ trustedProxies: proxies })).toContain('trustedProxies');
  });
});

describe('PrometheusRule and Grafana dashboard', () => {
  it('the PrometheusRule carries exactly the groups of deploy/prometheus/alerts.yaml', () => {
    const rule = only(rendered({ metrics: { prometheusRule: { enabled: true, labels: { release: 'kube-prometheus' } } } }), 'PrometheusRule');
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.metadata).toMatchObject({ namespace: NAMESPACE, labels: { release: 'kube-prometheus' } });
    expect(at(rule, 'spec', 'groups')).toEqual(at(parse(readFileSync(ALERTS_PATH, 'utf8')), 'groups'));
  });

  it('the dashboard ConfigMap carries deploy/grafana/mcp-auth-gateway.json, labelled grafana_dashboard: "1" for the sidecar', () => {
    const map = only(rendered({ metrics: { grafanaDashboard: { enabled: true } } }), 'ConfigMap', `${FULLNAME}-dashboard`);
    expect(map.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(JSON.parse(at(map, 'data', 'mcp-auth-gateway.json') as string)).toEqual(JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')));
  });

  it('the sidecar label (null removes the default one), namespace and folder annotation are configurable', () => {
    const labels = { grafana_dashboard: null, my_dashboards: 'mcp' };
    const map = only(
      rendered({ metrics: { grafanaDashboard: { enabled: true, namespace: 'grafana', labels, annotations: { grafana_folder: 'MCP' } } } }),
      'ConfigMap',
      `${FULLNAME}-dashboard`,
    );
    expect(map.metadata).toMatchObject({ namespace: 'grafana', labels: { my_dashboards: 'mcp' }, annotations: { grafana_folder: 'MCP' } });
    expect(map.metadata.labels).not.toHaveProperty('grafana_dashboard');
  });
});

describe('Ingress', () => {
  it('serves the host of config.public_url over TLS, every path to the MCP Service', () => {
    const ingress = only(rendered({ ingress: { enabled: true, className: 'nginx', tls: { secretName: 'mcp-tls' } } }), 'Ingress');
    expect(at(ingress, 'spec')).toEqual({
      ingressClassName: 'nginx',
      tls: [{ hosts: ['mcp.example.com'], secretName: 'mcp-tls' }],
      rules: [{ host: 'mcp.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: FULLNAME, port: { name: 'http' } } } }] } }],
    });
  });

  it('defaults the TLS Secret to <fullname>-tls', () => {
    expect(at(only(rendered({ ingress: { enabled: true } }), 'Ingress'), 'spec', 'tls')).toEqual([{ hosts: ['mcp.example.com'], secretName: `${FULLNAME}-tls` }]);
  });

  it('refuses an http:// public_url (the Ingress terminates TLS for it)', () => {
    const config = { ...chartValues.config, public_url: 'http://mcp.example.com', allow_insecure_http: true };
    expect(refusal({ ingress: { enabled: true }, config })).toContain('ingress.enabled terminates TLS for config.public_url');
  });
});

describe('NetworkPolicy', () => {
  const upstream = { name: 'calc', namespace: 'mcp-servers', podSelector: { matchLabels: { app: 'calc' } }, ports: [{ port: 3000, protocol: 'TCP' }] };
  const manifests = rendered({ networkPolicy: { enabled: true, upstreams: [upstream, { name: 'notes', podSelector: { matchLabels: { app: 'notes' } } }] } });
  const fromGatewayPods = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NAMESPACE } }, podSelector: { matchLabels: GATEWAY_PODS } }];

  it('the gateway admits MCP traffic from the ingress controller only, the admin port from monitoring only', () => {
    const policy = only(manifests, 'NetworkPolicy', FULLNAME);
    expect(at(policy, 'spec')).toEqual({
      podSelector: { matchLabels: GATEWAY_PODS },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx' } } }],
          ports: [{ port: 'http', protocol: 'TCP' }],
        },
        { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }], ports: [{ port: 'metrics', protocol: 'TCP' }] },
      ],
    });
    const ports = at(only(manifests, 'Deployment'), 'spec', 'template', 'spec', 'containers', 0, 'ports') as Tree[];
    expect(ports.map((port) => port.name)).toEqual(['http', 'metrics']);
  });

  it('each upstream admits the gateway\'s pods only, in the upstream\'s namespace (the release namespace by default)', () => {
    const calc = only(manifests, 'NetworkPolicy', `${FULLNAME}-upstream-calc`);
    expect(calc.metadata.namespace).toBe('mcp-servers');
    expect(at(calc, 'spec')).toEqual({ podSelector: upstream.podSelector, policyTypes: ['Ingress'], ingress: [{ from: fromGatewayPods, ports: upstream.ports }] });
    const notes = only(manifests, 'NetworkPolicy', `${FULLNAME}-upstream-notes`);
    expect(notes.metadata.namespace).toBe(NAMESPACE);
    expect(at(notes, 'spec', 'ingress')).toEqual([{ from: fromGatewayPods }]);
  });

  it('a decision listener on a pod address is reachable from the ingress controller too; a loopback one is not', () => {
    const exposed = rendered({ networkPolicy: { enabled: true }, config: { ...chartValues.config, decision: { host: '0.0.0.0', port: 8181, proxy: 'nginx', unauthenticated: true } } });
    expect(at(only(exposed, 'NetworkPolicy', FULLNAME), 'spec', 'ingress', 0, 'ports')).toEqual([{ port: 'http', protocol: 'TCP' }, { port: 8181, protocol: 'TCP' }]);
    const local = rendered({ networkPolicy: { enabled: true }, config: { ...chartValues.config, decision: { port: 8181, proxy: 'nginx', unauthenticated: true } } });
    expect(at(only(local, 'NetworkPolicy', FULLNAME), 'spec', 'ingress', 0, 'ports')).toEqual([{ port: 'http', protocol: 'TCP' }]);
  });

  it('extraIngress rules are added; without the admin listener there is no monitoring rule', () => {
    const extra = { from: [{ podSelector: { matchLabels: { app: 'probe' } } }], ports: [{ port: 'http' }] };
    const policy = only(rendered({ networkPolicy: { enabled: true, extraIngress: [extra] }, config: { ...chartValues.config, admin: { enabled: false } } }), 'NetworkPolicy', FULLNAME);
    expect(at(policy, 'spec', 'ingress')).toHaveLength(2);
    expect(at(policy, 'spec', 'ingress', 1)).toEqual(extra);
  });

  it.each<[string, Tree, string]>([
    ['an upstream with an empty podSelector (it would fence in the whole namespace)', { upstreams: [{ name: 'calc', podSelector: {} }] }, 'networkPolicy.upstreams[0].podSelector must select'],
    ['an upstream with matchLabels {}', { upstreams: [{ name: 'calc', podSelector: { matchLabels: {} } }] }, 'networkPolicy.upstreams[0].podSelector must select'],
    ['an upstream without a name', { upstreams: [{ podSelector: { matchLabels: { app: 'calc' } } }] }, 'name'],
    ['no ingress controller selector (null removes a default)', { ingressController: { namespaceSelector: null, podSelector: null } }, 'networkPolicy.ingressController needs'],
    ['no monitoring selector with the admin listener on', { monitoring: { namespaceSelector: null, podSelector: null } }, 'networkPolicy.monitoring needs'],
  ])('refuses %s', (_case, networkPolicy, message) => {
    expect(refusal({ networkPolicy: { enabled: true, ...networkPolicy } })).toContain(message);
  });
});

describe('helm lint', () => {
  it('passes with every optional piece on', () => {
    if (!HELM) throw new Error('helm is not installed: .ci/run installs it');
    const file = join(dir, 'lint-values.yaml');
    writeFileSync(
      file,
      stringify({
        networkPolicy: { enabled: true, upstreams: [{ name: 'calc', podSelector: { matchLabels: { app: 'calc' } } }] },
        ingress: { enabled: true },
        metrics: { prometheusRule: { enabled: true }, grafanaDashboard: { enabled: true }, serviceMonitor: { enabled: true } },
      }),
    );
    const result = spawnSync(HELM, ['lint', CHART_DIR, '-f', file, '--strict'], { encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toContain('0 chart(s) failed');
    expect(result.status).toBe(0);
  });
});

describe('values.config as rendered', () => {
  it('is still a config the gateway loads, with every optional piece on', () => {
    const manifests = rendered({ networkPolicy: { enabled: true }, ingress: { enabled: true }, metrics: { prometheusRule: { enabled: true }, grafanaDashboard: { enabled: true } } });
    const result = parseConfig(JSON.stringify(gatewayConfig(manifests)), { env: {} });
    expect(result.ok ? [] : result.problems).toEqual([]);
  });
});
