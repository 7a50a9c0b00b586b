import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface ForwardedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface RecordingForwarder {
  /** Everything the upstream was sent, as it was sent. */
  readonly requests: ForwardedRequest[];
  close(): Promise<void>;
}

/**
 * A transparent HTTP hop in front of an upstream, on 127.0.0.1:`port`: records each request (headers and body)
 * and streams both directions unchanged, SSE included. It stands where the gateway's upstream URL points, so a
 * test sees exactly what the upstream receives.
 */
export async function startRecordingForwarder(port: number, targetOrigin: string): Promise<RecordingForwarder> {
  const target = new URL(targetOrigin);
  const requests: ForwardedRequest[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        // Flushed at once, as the SDK server does: an SSE stream's headers must not wait for its first event.
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers).flushHeaders();
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () =>
      requests.push({
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }),
    );
    incoming.pipe(upstream);
    outgoing.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  return {
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
