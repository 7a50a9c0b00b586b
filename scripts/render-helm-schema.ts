import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { configSchema } from '../src/config/schema.js';
import { allowReferences, type JsonSchema } from './json-schema-references.js';

/**
 * Writes helm/mcp-auth-gateway/values.schema.json: the chart's own values described here, and `config` derived
 * from the gateway's config schema (the same source as schema/config.schema.json), so the two cannot drift.
 * A test fails when the file is stale: run `npx tsx scripts/render-helm-schema.ts`.
 */

export const HELM_VALUES_SCHEMA_PATH = fileURLToPath(
  new URL('../helm/mcp-auth-gateway/values.schema.json', import.meta.url),
);

/** Draft 7: understood by every Helm 3 release's validator (older ones predate 2020-12). */
const TARGET = 'draft-7';

const stringMap = (description: string) => z.record(z.string(), z.string()).describe(description);
const k8sObject = (description: string) => z.record(z.string(), z.unknown()).describe(description);
const k8sList = (description: string) => z.array(z.record(z.string(), z.unknown())).describe(description);
const port = (description: string) => z.int().min(1).max(65535).describe(description);
const intOrPercent = z.union([z.int().min(0), z.string().regex(/^(\d+%)?$/)]);

const probeTiming = (description: string) =>
  z
    .strictObject({
      initialDelaySeconds: z.int().min(0),
      periodSeconds: z.int().min(1),
      timeoutSeconds: z.int().min(1),
      failureThreshold: z.int().min(1),
    })
    .describe(description);

/** A Kubernetes label selector (matchLabels / matchExpressions); {} selects nothing in the chart's peers. */
const labelSelector = (description: string) =>
  z
    .strictObject({
      matchLabels: z.record(z.string(), z.string()).optional(),
      matchExpressions: z.array(z.record(z.string(), z.unknown())).optional(),
    })
    .describe(description);

const networkPeer = (description: string) =>
  z
    .strictObject({
      // null in a values file removes the chart's default selector.
      namespaceSelector: labelSelector('Namespaces of the admitted pods.').optional(),
      podSelector: labelSelector('Admitted pods in those namespaces.').optional(),
    })
    .describe(description);

const dnsName = z.string().regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/);

const chartValues = z.strictObject({
  global: k8sObject('Globals passed down by a parent chart (unused).').optional(),
  replicaCount: z.int().min(1).describe('Pods when autoscaling is off; > 1 needs Redis.'),
  image: z.strictObject({
    repository: z.string().min(1),
    tag: z.string(),
    digest: z.string().regex(/^(sha256:[a-f0-9]{64})?$/),
    pullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']),
  }),
  imagePullSecrets: z.array(z.strictObject({ name: z.string().min(1) })),
  nameOverride: z.string(),
  fullnameOverride: z.string(),
  serviceAccount: z.strictObject({
    create: z.boolean(),
    name: z.string(),
    annotations: stringMap('ServiceAccount annotations.'),
  }),
  automountServiceAccountToken: z.boolean(),
  existingSecret: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)?$/)
    .describe('Secret whose keys become environment variables for ${env:NAME} references.'),
  extraEnv: k8sList('Extra EnvVar entries.'),
  extraVolumes: k8sList('Extra pod volumes.'),
  extraVolumeMounts: k8sList('Extra volume mounts of the gateway container.'),
  redis: z.strictObject({
    enabled: z.boolean().describe('Shared cache in an external Redis; required for more than one replica.'),
    url: z.string().regex(/^(rediss?:\/\/\S+)?$/).describe('Plain redis:// URL; empty: REDIS_URL from existingSecret.'),
  }),
  trustedProxies: z
    .array(z.string().regex(/^[0-9A-Fa-f:.]+(\/\d{1,3})?$/))
    .describe('CIDRs whose X-Forwarded-* / Forwarded headers the gateway believes; rendered as config.trusted_proxies when not empty.'),
  config: z.unknown(),
  service: z.strictObject({
    type: z.enum(['ClusterIP', 'NodePort', 'LoadBalancer']),
    port: port('Service port of the MCP listener.'),
    metricsPort: port('Service port of the admin listener (/metrics).'),
    annotations: stringMap('Service annotations.'),
  }),
  metrics: z.strictObject({
    serviceMonitor: z.strictObject({
      enabled: z.boolean(),
      namespace: z.string(),
      interval: z.string().regex(/^\d+(ms|s|m|h)$/),
      scrapeTimeout: z.string().regex(/^\d+(ms|s|m|h)$/),
      labels: stringMap('Extra ServiceMonitor labels (e.g. the Prometheus release selector).'),
    }),
    prometheusRule: z.strictObject({
      enabled: z.boolean(),
      namespace: z.string(),
      labels: stringMap('Extra PrometheusRule labels (e.g. the Prometheus rule selector).'),
    }),
    grafanaDashboard: z.strictObject({
      enabled: z.boolean(),
      namespace: z.string(),
      labels: stringMap('Labels the Grafana sidecar selects dashboards by.'),
      annotations: stringMap('ConfigMap annotations (e.g. grafana_folder).'),
    }),
  }),
  ingress: z.strictObject({
    enabled: z.boolean(),
    className: z.string(),
    annotations: stringMap('Ingress annotations.'),
    tls: z.strictObject({ secretName: dnsName.describe('TLS Secret; empty: <fullname>-tls.') }),
  }),
  networkPolicy: z.strictObject({
    enabled: z.boolean(),
    ingressController: networkPeer('Who may reach the MCP port: the ingress controller.'),
    monitoring: networkPeer('Who may reach the admin port: Prometheus.'),
    extraIngress: k8sList('Further NetworkPolicyIngressRule entries of the gateway pods.'),
    upstreams: z
      .array(
        z.strictObject({
          name: dnsName.min(1),
          namespace: dnsName,
          podSelector: labelSelector('The upstream MCP server\'s pods.'),
          ports: z.array(z.strictObject({ port: z.union([z.int().min(1).max(65535), z.string().min(1)]), protocol: z.enum(['TCP', 'UDP', 'SCTP']).optional() })).optional(),
        }).partial({ namespace: true }),
      )
      .describe('Upstream MCP servers only the gateway may reach, one NetworkPolicy each.'),
  }),
  resources: k8sObject('Container resource requests and limits.'),
  probes: z.strictObject({
    liveness: probeTiming('Liveness probe timing (GET /healthz).'),
    readiness: probeTiming('Readiness probe timing (GET /readyz).'),
  }),
  podSecurityContext: k8sObject('Pod securityContext.'),
  securityContext: k8sObject('Container securityContext.'),
  podAnnotations: stringMap('Pod annotations.'),
  podLabels: stringMap('Pod labels.'),
  rollOnConfigChange: z.boolean(),
  terminationGracePeriodSeconds: z.int().min(1),
  preStopSleepSeconds: z.int().min(0),
  strategy: k8sObject('Deployment strategy.'),
  autoscaling: z.strictObject({
    enabled: z.boolean(),
    minReplicas: z.int().min(1),
    maxReplicas: z.int().min(1),
    targetCPUUtilizationPercentage: z.int().min(0).max(100),
    targetMemoryUtilizationPercentage: z.int().min(0).max(100),
  }),
  podDisruptionBudget: z.strictObject({
    enabled: z.boolean(),
    minAvailable: intOrPercent,
    maxUnavailable: intOrPercent,
  }),
  priorityClassName: z.string(),
  nodeSelector: stringMap('Node selector.'),
  tolerations: k8sList('Tolerations.'),
  affinity: k8sObject('Affinity rules.'),
  topologySpreadConstraints: k8sList('Topology spread constraints.'),
});

/** The JSON Schema Helm validates values against (`helm install/template/lint`). */
export function renderHelmValuesSchema(): string {
  const schema = z.toJSONSchema(chartValues, { io: 'input', target: TARGET }) as JsonSchema;
  const config = z.toJSONSchema(configSchema, { io: 'input', target: TARGET }) as JsonSchema;
  delete config.$schema;
  const properties = schema.properties as JsonSchema;
  properties.config = {
    ...(allowReferences(config) as JsonSchema),
    description:
      'The gateway configuration file (schema/config.schema.json), mounted at /etc/mcp-auth-gateway/config.yaml. ' +
      'Strings may hold ${env:NAME} / ${file:/path} references.',
  };
  return `${JSON.stringify({ ...schema, title: 'mcp-auth-gateway Helm chart values' }, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(HELM_VALUES_SCHEMA_PATH, renderHelmValuesSchema());
  console.log(`wrote ${HELM_VALUES_SCHEMA_PATH}`);
}
