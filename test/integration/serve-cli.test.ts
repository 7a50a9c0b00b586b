import { spawn, type ChildProcess } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestIssuer, type TestIssuer } from '../helpers/issuer.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { sampleValue, scrape } from '../helpers/metrics.js';
import { bodyReader, openEventStream } from '../helpers/sse.js';
import { jsonRpcEcho, startTestUpstream, type TestUpstream } from '../helpers/upstream.js';

const PUBLIC = 'https://gw.example.test';

type LogLine = Record<string, unknown> & { msg?: string };

/** The real CLI (`serve`) as a child process, its JSON log lines parsed as they arrive. */
interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  readonly admin: string;
  /** Resolves with the first line (already received or still to come) after `from` that matches. */
  waitForLog(matches: (line: LogLine) => boolean, from?: number): Promise<LogLine>;
  lineCount(): number;
  exited: Promise<number | null>;
}

let issuer: TestIssuer;
let upstream: TestUpstream;
let dir: string;
let served: Served | undefined;

function configYaml(...names: string[]): string {
  return `listen: { host: 127.0.0.1, port: 0 }
admin: { host: 127.0.0.1, port: 0 }
shutdown: { grace_period: 5m }
public_url: ${PUBLIC}
routes:${names
    .map(
      (name) => `
  - name: ${name}
    path: /${name}/mcp
    upstream: { url: ${upstream.url} }
    authorization_servers: [${issuer.issuer}]
    tokens:
      jwt: { issuer: ${issuer.issuer}, algorithms: [ES256] }
`,
    )
    .join('')}`;
}

/** Replaces the file atomically, as editors and ConfigMap updates do: the watcher never sees half a file. */
async function replaceFile(file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text);
  await rename(`${file}.tmp`, file);
}

async function serve(file: string): Promise<Served> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: LogLine[] = [];
  const waiters: { from: number; matches: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];
  let buffered = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const complete = buffered.split('\n');
    buffered = complete.pop() ?? '';
    for (const text of complete) {
      lines.push(JSON.parse(text) as LogLine);
      for (const waiter of [...waiters]) {
        const line = lines.slice(waiter.from).find(waiter.matches);
        if (line) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const waitForLog = (matches: (line: LogLine) => boolean, from = 0) =>
    new Promise<LogLine>((resolve, reject) => {
      const found = lines.slice(from).find(matches);
      if (found) return resolve(found);
      waiters.push({ from, matches, resolve });
      void exited.then((code) => reject(new Error(`gateway exited (${code}) first; stderr: ${stderr}`)));
    });
  const listening = await waitForLog((line) => line.msg === 'listening');
  return { child, url: String(listening.url), admin: String(listening.admin), waitForLog, lineCount: () => lines.length, exited };
}

async function post(url: string, name: string, headers: Record<string, string> = {}): Promise<Response> {
  const token = await issuer.mint({ aud: `${PUBLIC}/${name}/mcp` });
  return fetch(`${url}/${name}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add' } }),
  });
}

beforeAll(async () => {
  issuer = await startTestIssuer();
  upstream = await startTestUpstream();
});

afterAll(async () => {
  await Promise.all([issuer.close(), upstream.close()]);
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcpgw-serve-'));
  upstream.respondWith(jsonRpcEcho);
});

afterEach(async () => {
  if (served && served.child.exitCode === null) {
    served.child.kill('SIGKILL');
    await served.exited;
  }
  served = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('mcp-auth-gateway serve (real process)', () => {
  it('logs the bound addresses; metrics only on the admin listener; reloads on file change and SIGHUP; a bad file keeps serving', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, configYaml('calc'));
    served = await serve(file);
    const { url, admin } = served;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(admin).not.toBe(url);
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    expect((await post(url, 'calc')).status).toBe(200);

    let mark = served.lineCount();
    await replaceFile(file, configYaml('calc', 'notes'));
    expect(await served.waitForLog((line) => line.msg === 'config reloaded', mark)).toMatchObject({ trigger: 'file' });
    expect((await post(url, 'notes')).status).toBe(200);

    mark = served.lineCount();
    served.child.kill('SIGHUP');
    expect(await served.waitForLog((line) => line.msg === 'config reloaded', mark)).toMatchObject({ trigger: 'signal' });

    mark = served.lineCount();
    await replaceFile(file, 'routes: [\n');
    const failure = await served.waitForLog((line) => typeof line.msg === 'string' && line.msg.startsWith('config reload failed'), mark);
    expect(failure).toMatchObject({ level: 50, trigger: 'file' });
    expect((await post(url, 'notes')).status).toBe(200);
    const { samples } = await scrape(admin);
    expect(sampleValue(samples, 'mcp_gateway_config_reloads_total', { result: 'success' })).toBe(2);
    expect(sampleValue(samples, 'mcp_gateway_config_reloads_total', { result: 'failure' })).toBe(1);
  });

  it('telemetry.traces: serve exports the request spans, and flushes the last ones before it exits on SIGTERM', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const file = join(dir, 'gateway.yaml');
      await writeFile(file, `${configYaml('calc')}telemetry: { traces: { otlp_endpoint: "${receiver.url}" } }\n`);
      served = await serve(file);
      expect(await served.waitForLog((line) => String(line.msg).startsWith('tracing:'))).toMatchObject({ otlp_endpoint: receiver.url, sample_ratio: 1 });
      const traceId = '0123456789abcdef0123456789abcdef';
      const response = await post(served.url, 'calc', { traceparent: `00-${traceId}-0123456789abcdef-01` });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
      const request = receiver.spans().find((span) => span.traceId === traceId && span.attributes['mcp_gateway.route'] === 'calc');
      expect(request).toMatchObject({ name: 'POST /calc/mcp', parentSpanId: '0123456789abcdef' });
    } finally {
      await receiver.close();
    }
  });

  it('I11 SIGTERM: readiness 503 and new requests 503 while draining, open GET stream ended cleanly, in-flight POST finishes, exit 0', async () => {
    const file = join(dir, 'gateway.yaml');
    await writeFile(file, configYaml('calc'));
    served = await serve(file);
    const { url } = served;
    let postStream: ServerResponse | undefined;
    upstream.respondWith((request, response) => {
      openEventStream(response, `{"method":"${request.method}"}`);
      if (request.method === 'POST') postStream = response;
    });
    const token = await issuer.mint({ aud: `${PUBLIC}/calc/mcp` });
    const standalone = bodyReader(await fetch(`${url}/calc/mcp`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }));
    await standalone.until('"method":"GET"');
    const inFlight = bodyReader(await post(url, 'calc'));
    await inFlight.until('"method":"POST"');

    const mark = served.lineCount();
    served.child.kill('SIGTERM');
    await served.waitForLog((line) => line.msg === 'shutting down', mark);
    expect(await standalone.rest()).toEqual({ text: 'id: 1\ndata: {"method":"GET"}\n\n', clean: true });
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    expect((await post(url, 'calc')).status).toBe(503);
    expect(served.child.exitCode).toBeNull();

    postStream?.end('id: 2\ndata: {"result":"done"}\n\n');
    expect((await inFlight.rest()).text).toContain('"result":"done"');
    expect(await served.exited).toBe(0);
    await served.waitForLog((line) => line.msg === 'shut down', mark);
  });
});
