import { once } from 'node:events';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../../../src/decision/refusal.js';
import type { MessageRewrite } from '../../../../src/decision/index.js';
import { createSseRewriter, readCapped, rewriteJsonBody } from '../../../../src/doors/proxy/list-filter.js';

/** Marks every rewritten message, so a test sees which events went through the rewrite. */
const mark: MessageRewrite = (message) => ({ rewritten: message });

async function run(chunks: readonly string[], rewrite: MessageRewrite = mark, maxEventBytes?: number): Promise<string> {
  const rewriter = createSseRewriter(rewrite, maxEventBytes);
  const output: string[] = [];
  rewriter.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  for (const chunk of chunks) rewriter.write(Buffer.from(chunk, 'utf8'));
  rewriter.end();
  await once(rewriter, 'end');
  return output.join('');
}

describe('createSseRewriter', () => {
  it.each<[string, string, string]>([
    ['a JSON data event', 'id: 1\ndata: {"a":1}\n\n', 'id: 1\ndata: {"rewritten":{"a":1}}\n\n'],
    ['CRLF line endings', 'event: message\r\ndata: {"a":1}\r\n\r\n', 'event: message\ndata: {"rewritten":{"a":1}}\n\n'],
    ['CR line endings', 'data: {"a":1}\r\r', 'data: {"rewritten":{"a":1}}\n\n'],
    ['data split over lines', 'data: {"a":\ndata: 1}\nid: 9\n\n', 'data: {"rewritten":{"a":1}}\nid: 9\n\n'],
    ['data without the optional space', 'data:{"a":1}\n\n', 'data: {"rewritten":{"a":1}}\n\n'],
    ['empty data (a priming event) passes byte for byte', 'id: p1\r\ndata: \r\n\r\n', 'id: p1\r\ndata: \r\n\r\n'],
    ['comments and retry pass byte for byte', ': keep-alive\nretry: 1000\n\n', ': keep-alive\nretry: 1000\n\n'],
    ['a multibyte character split across chunks', 'data: {"t":"☕"}\n\n', 'data: {"rewritten":{"t":"☕"}}\n\n'],
    ['an event cut off by the end of the stream', 'data: {"a":1}', 'data: {"rewritten":{"a":1}}\n'],
    ['a final CR ends the last line', 'data: {"a":1}\r', 'data: {"rewritten":{"a":1}}\n'],
  ])('%s', async (_title, input, expected) => {
    expect(await run([input])).toBe(expected);
    // Every split point gives the same result (bytes, so multibyte characters get cut too).
    const bytes = Buffer.from(input, 'utf8');
    for (let cut = 1; cut < bytes.length; cut++) {
      const rewriter = createSseRewriter(mark);
      const output: Buffer[] = [];
      rewriter.on('data', (chunk: Buffer) => output.push(chunk));
      rewriter.write(bytes.subarray(0, cut));
      rewriter.end(bytes.subarray(cut));
      await once(rewriter, 'end');
      expect(Buffer.concat(output).toString('utf8')).toBe(expected);
    }
  });

  it('passes each event on as soon as it is complete (nothing else is held back)', async () => {
    const rewriter = createSseRewriter(mark);
    const first = once(rewriter, 'data');
    rewriter.write('data: {"first":true}\n\ndata: {"sec');
    const [chunk] = (await first) as [Buffer];
    expect(chunk.toString('utf8')).toBe('data: {"rewritten":{"first":true}}\n\n');
    const rest: string[] = [];
    rewriter.on('data', (more: Buffer) => rest.push(more.toString('utf8')));
    rewriter.end('ond":true}\n\n');
    await once(rewriter, 'end');
    expect(rest.join('')).toBe('data: {"rewritten":{"second":true}}\n\n');
  });

  it('fails the stream rather than pass an event larger than its limit', async () => {
    const rewriter = createSseRewriter(mark, 64);
    rewriter.resume();
    const failed = once(rewriter, 'error');
    rewriter.write(`data: {"big":"${'x'.repeat(100)}`);
    const [error] = (await failed) as [GatewayError];
    expect(error).toMatchObject({ code: 'list_unfilterable', reason: 'list_event_too_large' });
  });

  /** Passes (marked) only messages with `ok`, withholding the rest. */
  const okOnly: MessageRewrite = (message) => ((message as { ok?: boolean }).ok ? mark(message) : undefined);

  it.each([
    ['data that is not JSON (Python reads NaN)', 'data: {"tools":[{"name":"secret","x":NaN}]}\n\n', 'list_event_not_json'],
    ['whitespace data', 'data:  \n\n', 'list_event_not_json'],
    ['two empty data lines (dispatched as a newline)', 'data:\ndata:\n\n', 'list_event_not_json'],
    ['non-JSON data cut off by the end of the stream', 'data: {"tools":', 'list_event_not_json'],
    ['a message the rewrite withholds', 'data: {"a":1}\n\n', 'list_message_withheld'],
  ])('K5 fails the stream on %s, after passing the events before it', async (_title, event, reason) => {
    const rewriter = createSseRewriter(okOnly);
    const output: string[] = [];
    rewriter.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
    const failed = once(rewriter, 'error');
    rewriter.end(`data: {"ok":true}\n\n${event}`);
    const [error] = (await failed) as [GatewayError];
    expect(error).toMatchObject({ code: 'list_unfilterable', reason });
    expect(output.join('')).toBe('data: {"rewritten":{"ok":true}}\n\n');
  });
});

describe('rewriteJsonBody', () => {
  it('always re-serialises what it parsed: a duplicate key cannot show a client another value', () => {
    const body = Buffer.from('{"id":1,"result":{"tools":["secret"]},"result":{"tools":[]}}');
    expect(rewriteJsonBody(body, (message) => message)?.toString()).toBe('{"id":1,"result":{"tools":[]}}');
  });

  it('a message the rewrite withholds → undefined (the caller refuses the answer)', () => {
    expect(rewriteJsonBody(Buffer.from('{"id":8}'), () => undefined)).toBeUndefined();
  });

  it.each([['not JSON', 'nope'], ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0x7d])], ['empty', '']])(
    '%s → undefined (the caller refuses the answer)',
    (_title, body) => {
      expect(rewriteJsonBody(Buffer.isBuffer(body) ? body : Buffer.from(body), mark)).toBeUndefined();
    },
  );
});

describe('readCapped', () => {
  it('reads up to the limit and gives up beyond it', async () => {
    expect((await readCapped(Readable.from([Buffer.from('ab'), Buffer.from('cd')]), 4))?.toString()).toBe('abcd');
    expect(await readCapped(Readable.from([Buffer.from('ab'), Buffer.from('cde')]), 4)).toBeUndefined();
  });
});
