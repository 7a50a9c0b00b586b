import type { Readable } from 'node:stream';
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { GatewayError, type MessageRewrite } from '../../decision/index.js';

/** The answer cannot be filtered as `policy.hide_unauthorized` requires: refused (502), never relayed unfiltered. */
export function unfilterable(reason: string): GatewayError {
  return new GatewayError('list_unfilterable', { reason });
}

/** Largest JSON response, or single SSE event, the filter holds while rewriting a list. */
export const MAX_FILTERED_MESSAGE_BYTES = 8 * 1024 * 1024;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The whole stream, or `undefined` (stream destroyed) past `limit` bytes. */
export async function readCapped(stream: Readable, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      stream.destroy();
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * An `application/json` response body rewritten: parsed, passed through `rewrite`, serialised again — always
 * re-serialised, so the client reads exactly the object that was filtered (no duplicate-key differential).
 * `undefined` when the body is not UTF-8 JSON or `rewrite` withholds it: the caller must then refuse it rather than
 * pass it unfiltered.
 */
export function rewriteJsonBody(body: Buffer, rewrite: MessageRewrite): Buffer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(body));
  } catch {
    return undefined;
  }
  const rewritten = rewrite(value);
  return rewritten === undefined ? undefined : Buffer.from(JSON.stringify(rewritten), 'utf8');
}

function isDataLine(line: string): boolean {
  return line === 'data' || line.startsWith('data:');
}

/** The value of a `data` line: after the colon, one leading space removed (HTML SSE parsing rules). */
function dataValue(line: string): string {
  const value = line.slice(5);
  return value.startsWith(' ') ? value.slice(1) : value;
}

/**
 * One SSE event out: its data is replaced by the rewritten message on one `data:` line (other fields — id, event,
 * retry, comments — kept in order). An event without data, or with empty data (a priming event), goes out byte for
 * byte: clients dispatch no message for it. Data that is not JSON throws rather than pass: a client's parser may
 * still read it (Python's json reads `NaN`), unfiltered; so does a message the rewrite withholds.
 */
function rewriteEvent(lines: readonly string[], raw: string, terminated: boolean, rewrite: MessageRewrite): string {
  const data = lines.filter(isDataLine).map(dataValue).join('\n');
  if (data === '') return raw;
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    throw unfilterable('list_event_not_json');
  }
  const rewritten = rewrite(message);
  if (rewritten === undefined) throw unfilterable('list_message_withheld');
  const firstData = lines.findIndex(isDataLine);
  const out: string[] = [];
  lines.forEach((line, index) => {
    if (!isDataLine(line)) out.push(line);
    else if (index === firstData) out.push(`data: ${JSON.stringify(rewritten)}`);
  });
  return `${out.join('\n')}\n${terminated ? '\n' : ''}`;
}

/**
 * Rewrites the JSON messages of a `text/event-stream` without holding back the stream: each event is written as
 * soon as its terminating blank line arrives (only the event in progress is buffered, up to `maxEventBytes`).
 * The stream fails rather than pass a message unfiltered: an event over that size, data that is not JSON, a message
 * the rewrite withholds. Lines may end in CRLF, LF or CR.
 */
export function createSseRewriter(rewrite: MessageRewrite, maxEventBytes = MAX_FILTERED_MESSAGE_BYTES): Transform {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let lines: string[] = [];
  let raw = '';

  function drain(push: (text: string) => void): void {
    for (;;) {
      const end = pending.search(/[\r\n]/);
      if (end === -1) break;
      // A CR at the very end may be the first half of CRLF: wait for the next chunk.
      if (pending[end] === '\r' && end === pending.length - 1) break;
      const terminatorLength = pending[end] === '\r' && pending[end + 1] === '\n' ? 2 : 1;
      const line = pending.slice(0, end);
      raw += pending.slice(0, end + terminatorLength);
      pending = pending.slice(end + terminatorLength);
      if (line === '') {
        push(rewriteEvent(lines, raw, true, rewrite));
        lines = [];
        raw = '';
      } else {
        lines.push(line);
      }
    }
    if (raw.length + pending.length > maxEventBytes) throw unfilterable('list_event_too_large');
  }

  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      pending += decoder.write(chunk);
      callback(failureOf(() => drain((text) => this.push(text))));
    },
    flush(callback: TransformCallback) {
      pending += decoder.end();
      // A final CR cannot start a CRLF any more: complete it so the last line is read.
      if (pending.endsWith('\r')) pending += '\n';
      callback(
        failureOf(() => {
          drain((text) => this.push(text));
          // An event cut off by the end of the stream (clients discard it) still goes through the rewrite.
          if (pending !== '') lines.push(pending);
          if (lines.length > 0) this.push(rewriteEvent(lines, raw + pending, false, rewrite));
        }),
      );
    },
  });
}

/** Runs `step`; the error it threw, else null (what a stream callback takes). */
function failureOf(step: () => void): Error | null {
  try {
    step();
    return null;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
