import type { AddressInfo } from 'node:net';
import type { Gateway } from '../../src/gateway/build.js';

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** Prometheus text exposition → samples (comments skipped). */
export function parseMetrics(text: string): Sample[] {
  return text.split('\n').flatMap((line) => {
    const match = SAMPLE_LINE.exec(line);
    if (!match || line.startsWith('#')) return [];
    const pairs = [...(match[2] ?? '').matchAll(LABEL)].map((found): [string, string] => [found[1] ?? '', found[2] ?? '']);
    const labels = Object.fromEntries(pairs);
    return [{ name: match[1] ?? '', labels, value: Number(match[3]) }];
  });
}

/** The value of the one sample named `name` carrying at least `labels`; undefined when there is none. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

/** Listens the gateway's admin app on 127.0.0.1, port 0; returns its base URL. */
export async function listenAdmin(gateway: Gateway): Promise<string> {
  await gateway.admin.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(gateway.admin.server.address() as AddressInfo).port}`;
}

export async function scrape(adminUrl: string): Promise<{ text: string; samples: Sample[] }> {
  const response = await fetch(`${adminUrl}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  const text = await response.text();
  return { text, samples: parseMetrics(text) };
}
