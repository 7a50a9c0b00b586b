import { once } from 'node:events';
import { Client, Pool } from 'undici';

export interface StreamCheck {
  readonly status: number;
  readonly events: number;
  /** Every event's id was the one after the previous (0, 1, 2, ...). */
  readonly inOrder: boolean;
  readonly elapsedMs: number;
}

/** Reads one SSE response to its end, checking that the numbered events arrive complete and in order. */
export async function readEventStream(origin: string, path: string, headers: Readonly<Record<string, string>>): Promise<StreamCheck> {
  const client = new Client(origin);
  const started = performance.now();
  try {
    const response = await client.request({ method: 'GET', path, headers });
    response.body.setEncoding('utf8');
    let buffered = '';
    let events = 0;
    let inOrder = true;
    for await (const chunk of response.body as AsyncIterable<string>) {
      buffered += chunk;
      let end = buffered.indexOf('\n\n');
      while (end !== -1) {
        const idLine = /^id: (\d+)$/m.exec(buffered.slice(0, end));
        if (idLine?.[1] === undefined || Number(idLine[1]) !== events) inOrder = false;
        events += 1;
        buffered = buffered.slice(end + 2);
        end = buffered.indexOf('\n\n');
      }
    }
    return { status: response.statusCode, events, inOrder: inOrder && buffered === '', elapsedMs: performance.now() - started };
  } finally {
    await client.close();
  }
}

export interface OpenStreams {
  /** Streams whose first bytes arrived. */
  readonly opened: number;
  readonly failed: number;
  close(): Promise<void>;
}

/** Opens `count` SSE streams at once (one connection each) and keeps them open until `close()`. */
export async function openEventStreams(
  origin: string,
  path: string,
  headers: Readonly<Record<string, string>>,
  count: number,
  timeoutMs: number,
): Promise<OpenStreams> {
  const pool = new Pool(origin, { connections: count, pipelining: 1, bodyTimeout: 0, headersTimeout: timeoutMs });
  const aborts = Array.from({ length: count }, () => new AbortController());
  const results = await Promise.allSettled(
    aborts.map(async (abort) => {
      const response = await pool.request({ method: 'GET', path, headers, signal: abort.signal });
      if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
      // Wait for the first event, so the stream is known to be open end to end; later bytes are discarded.
      await once(response.body, 'data', { signal: AbortSignal.timeout(timeoutMs) });
      response.body.on('data', () => undefined);
      response.body.on('error', () => undefined);
    }),
  );
  const opened = results.filter((result) => result.status === 'fulfilled').length;
  return {
    opened,
    failed: count - opened,
    async close() {
      for (const abort of aborts) abort.abort();
      await pool.destroy();
    },
  };
}
