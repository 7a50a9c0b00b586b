import type { ServerResponse } from 'node:http';

/** Reads a streamed response body chunk by chunk. */
export interface BodyReader {
  /** Reads until the text received so far contains `text`; rejects if the body ends first. */
  until(text: string): Promise<string>;
  /** Reads to the end; resolves with everything received and whether the body ended without an error. */
  rest(): Promise<{ readonly text: string; readonly clean: boolean }>;
}

export function bodyReader(response: Response): BodyReader {
  if (!response.body) throw new Error('response has no body');
  const reader = response.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
  const decoder = new TextDecoder();
  let received = '';
  return {
    async until(text) {
      while (!received.includes(text)) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error(`body ended before ${JSON.stringify(text)}; got ${JSON.stringify(received)}`);
        received += decoder.decode(chunk.value, { stream: true });
      }
      return received;
    },
    async rest() {
      try {
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          received += decoder.decode(chunk.value, { stream: true });
        }
        return { text: received, clean: true };
      } catch {
        return { text: received, clean: false };
      }
    },
  };
}

/** Starts an SSE response upstream-side and writes one event. */
export function openEventStream(response: ServerResponse, firstEvent: string): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.write(`id: 1\ndata: ${firstEvent}\n\n`);
}
