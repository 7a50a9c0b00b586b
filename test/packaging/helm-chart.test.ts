import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isMap, isScalar, parse, parseDocument } from 'yaml';
import type { Node as YamlNode } from 'yaml';
import { z } from 'zod';
import { renderHelmValuesSchema } from '../../scripts/render-helm-schema.js';
import { parseConfig } from '../../src/config/load.js';

// These checks read the files; test/packaging/helm-template.test.ts renders the chart with helm.

const CHART_DIR = fileURLToPath(new URL('../../helm/mcp-auth-gateway/', import.meta.url));
const ROOT_DIR = fileURLToPath(new URL('../../', import.meta.url));
const readChart = (path: string) => readFileSync(join(CHART_DIR, path), 'utf8');

type Tree = { [key: string]: unknown };
const isTree = (value: unknown): value is Tree => typeof value === 'object' && value !== null && !Array.isArray(value);

const chart = parse(readChart('Chart.yaml')) as Tree;
const valuesText = readChart('values.yaml');
const values = parse(valuesText) as Tree;
const schemaText = readChart('values.schema.json');
const schema = JSON.parse(schemaText) as Tree;
const valuesSchema = z.fromJSONSchema(schema);
const templates = readdirSync(join(CHART_DIR, 'templates')).map((name) => ({
  name,
  text: readChart(`templates/${name}`),
}));
const template = (name: string) => templates.find((entry) => entry.name === name)?.text ?? '';

function problemsOf(candidate: unknown): string[] {
  const result = valuesSchema.safeParse(candidate);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

const valuesConfig = values.config as Tree;

describe('files/ (what the PrometheusRule and the dashboard ConfigMap render; Helm reads nothing outside the chart)', () => {
  it.each([
    ['files/prometheus-alerts.yaml', 'deploy/prometheus/alerts.yaml'],
    ['files/grafana-dashboard.json', 'deploy/grafana/mcp-auth-gateway.json'],
  ])('%s is an exact copy of %s, the canonical file', (copy, canonical) => {
    expect(readChart(copy), `cp ${canonical} helm/mcp-auth-gateway/${copy}`).toBe(readFileSync(join(ROOT_DIR, canonical), 'utf8'));
  });
});

describe('Chart.yaml', () => {
  it('has the fields Helm 3 requires and recommends', () => {
    expect(chart.apiVersion).toBe('v2');
    expect(chart.name).toBe(basename(CHART_DIR));
    expect(chart.type).toBe('application');
    expect(chart.description).toEqual(expect.any(String));
    expect(chart.kubeVersion).toMatch(/^>=\d+\.\d+/);
    expect(chart.version).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  });

  it('appVersion (the default image tag) is the package version', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT_DIR, 'package.json'), 'utf8')) as { version: string };
    expect(chart.appVersion).toBe(pkg.version);
  });
});

describe('values.schema.json', () => {
  it('is what scripts/render-helm-schema.ts renders from the config schema (run it after schema changes)', () => {
    expect(schemaText).toBe(renderHelmValuesSchema());
  });

  it('accepts the chart defaults', () => {
    expect(problemsOf(values)).toEqual([]);
  });

  it('declares exactly the top-level values in values.yaml (plus a parent chart\'s global)', () => {
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties as Tree).sort()).toEqual([...Object.keys(values), 'global'].sort());
  });

  it.each([
    ['replicaCount 0', { replicaCount: 0 }],
    ['an unknown top-level key', { replicas: 2 }],
    ['an unknown image key', { image: { ...(values.image as Tree), tagg: '1.0' } }],
    ['a pull policy Kubernetes does not know', { image: { ...(values.image as Tree), pullPolicy: 'Sometimes' } }],
    ['a non-Redis redis.url', { redis: { enabled: true, url: 'http://redis:6379' } }],
    ['an unknown gateway config key', { config: { ...valuesConfig, listn: { port: 8080 } } }],
    ['a gateway config without routes', { config: { public_url: 'https://mcp.example.com' } }],
    ['a literal cache key_secret shorter than 32 characters', { config: { ...valuesConfig, cache: { key_secret: 'short' } } }],
  ])('rejects %s', (_case, override) => {
    expect(problemsOf({ ...values, ...override })).not.toEqual([]);
  });

  it('accepts ${env:…} references where config strings have constraints (resolved before the gateway validates)', () => {
    const cache = { redis_url: '${env:REDIS_URL}', key_secret: '${env:CACHE_KEY_SECRET}' };
    expect(problemsOf({ ...values, config: { ...valuesConfig, cache } })).toEqual([]);
  });
});

describe('values.config', () => {
  it('is a gateway config the gateway itself loads', () => {
    const result = parseConfig(JSON.stringify(valuesConfig), { env: {} });
    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it('still loads with the cache keys the ConfigMap adds for redis.enabled', () => {
    const injected = /dict "redis_url" "([^"]+)" "key_secret" "([^"]+)"/.exec(template('configmap.yaml'));
    expect(injected).not.toBeNull();
    const cache = { redis_url: injected?.[1], key_secret: injected?.[2] };
    const env = { REDIS_URL: 'redis://redis.example.svc:6379', CACHE_KEY_SECRET: 'k'.repeat(40) };
    const result = parseConfig(JSON.stringify({ ...valuesConfig, cache }), { env });
    expect(result.ok ? result.config.cache.redisUrl?.reveal() : result.problems).toBe(env.REDIS_URL);
  });

  it('binds both listeners to all interfaces, so probes and Prometheus reach them', () => {
    expect(valuesConfig.listen).toMatchObject({ host: '0.0.0.0' });
    expect(valuesConfig.admin).toMatchObject({ host: '0.0.0.0' });
  });
});

describe('values.yaml', () => {
  it('documents every chart value with a comment on or above its line', () => {
    const lines = valuesText.split('\n');
    const lineOf = (offset: number) => valuesText.slice(0, offset).split('\n').length - 1;
    const undocumented: string[] = [];
    // Walks the keys the schema declares; free-form maps (resources, labels...) hold Kubernetes' keys, not ours.
    const walk = (node: unknown, schemaNode: unknown, path: string) => {
      if (!isMap(node) || !isTree(schemaNode) || !isTree(schemaNode.properties)) return;
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : '';
        const declared = schemaNode.properties[key];
        if (declared === undefined) continue;
        const line = lineOf((pair.key as YamlNode).range?.[0] ?? 0);
        const documented = (lines[line] ?? '').includes('#') || (lines[line - 1] ?? '').trim().startsWith('#');
        if (!documented) undocumented.push(`${path}${key}`);
        walk(pair.value, declared, `${path}${key}.`);
      }
    };
    walk(parseDocument(valuesText).contents, schema, '');
    expect(undocumented).toEqual([]);
  });

  it('ships a hardened security context', () => {
    expect(values.podSecurityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(values.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(values.automountServiceAccountToken).toBe(false);
  });
});

describe('templates', () => {
  it('reference only values that values.yaml defines', () => {
    const absent = Symbol('absent');
    const missing: string[] = [];
    for (const { name, text } of templates) {
      for (const [, path = ''] of text.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
        let node: unknown = values;
        for (const key of path.slice(1).split('.')) node = isTree(node) && Object.hasOwn(node, key) ? node[key] : absent;
        if (node === absent) missing.push(`${name}: .Values${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it.each(templates.map(({ name }) => name))('%s has balanced {{ }} and block actions', (name) => {
    const text = template(name);
    expect(text.split('{{').length).toBe(text.split('}}').length);
    let depth = 0;
    for (const [, action = ''] of text.matchAll(/\{\{-?\s*([\s\S]*?)\s*-?\}\}/g)) {
      const keyword = /^[a-z]+/.exec(action)?.[0];
      if (keyword === 'if' || keyword === 'range' || keyword === 'with' || keyword === 'define' || keyword === 'block') depth += 1;
      if (keyword === 'end') depth -= 1;
      expect(depth).toBeGreaterThanOrEqual(0);
    }
    expect(depth).toBe(0);
  });

  it('include only templates that _helpers.tpl defines', () => {
    const all = templates.map(({ text }) => text).join('\n');
    const defined = new Set([...all.matchAll(/define "([^"]+)"/g)].map((match) => match[1]));
    const used = new Set([...all.matchAll(/(?:include|template) "([^"]+)"/g)].map((match) => match[1]));
    expect([...used].filter((name) => !defined.has(name))).toEqual([]);
  });

  it('the Deployment probes /healthz and /readyz, rolls on config change and runs the guards', () => {
    const deployment = template('deployment.yaml');
    expect(deployment).toMatch(/livenessProbe:\s+httpGet: \{ path: \/healthz, port: http \}/);
    expect(deployment).toMatch(/readinessProbe:\s+httpGet: \{ path: \/readyz, port: http \}/);
    expect(deployment).toContain('checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}');
    expect(deployment).toMatch(/^\{\{- include "mcp-auth-gateway.validate" \. -\}\}/);
    expect(deployment).toMatch(/- name: tmp\s+mountPath: \/tmp/);
    expect(template('_helpers.tpl')).toMatch(/fail "more than one replica/);
  });

  it('mount the config where the image\'s CMD reads it', () => {
    const configDir = /define "mcp-auth-gateway.configDir" -\}\}([^{]+)\{\{/.exec(template('_helpers.tpl'))?.[1];
    const dockerfile = readFileSync(join(ROOT_DIR, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`CMD ["serve", "--config", "${configDir}/config.yaml"]`);
  });

  it('the ServiceMonitor scrapes the metrics port on /metrics with the Prometheus Operator API', () => {
    const monitor = template('servicemonitor.yaml');
    expect(monitor).toContain('apiVersion: monitoring.coreos.com/v1');
    expect(monitor).toMatch(/- port: metrics\s+path: \/metrics/);
  });
});
