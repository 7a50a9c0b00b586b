import type { IncomingHttpHeaders } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

/** The upstream's answer: a small one's body whole, any other's as a stream. */
export interface UpstreamAnswer {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  /** Whole when `holdWhole` chose so from the headers; else streamed, with backpressure. */
  readonly body: Buffer | Readable;
}

/** Decides from the response headers whether the body is collected whole (then sent in one write). */
export type HoldWhole = (headers: IncomingHttpHeaders) => boolean;

/** What undici's `request()` uses for its body stream: the same buffering here. */
const STREAM_HIGH_WATER_MARK = 64 * 1024;

class AbortedByGateway extends Error {
  override readonly name = 'AbortError';
  readonly code = 'UND_ERR_ABORTED';
}

/** A streamed upstream body: reading resumes the upstream socket, destroying it before the end aborts the exchange. */
class UpstreamBody extends Readable {
  ended = false;

  constructor(private readonly controller: Dispatcher.DispatchController) {
    super({ highWaterMark: STREAM_HIGH_WATER_MARK });
  }

  override _read(): void {
    this.controller.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.ended) this.controller.abort(error ?? new AbortedByGateway('upstream body abandoned'));
    callback(error);
  }
}

/**
 * One exchange with the upstream through undici's dispatch interface. Against `request()` it skips, for the small
 * answers that are most MCP traffic, the body stream, the async resource and the consume machinery (about 8 µs of
 * CPU per request here, bench/README.md); larger answers and event streams are still streamed with backpressure.
 * `abort()` ends the exchange at any point: before it started (queued in the pool), before headers, or mid-body.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  readonly answer: Promise<UpstreamAnswer>;
  /** `performance.now()` when the status line and headers arrived (the answer may complete later). */
  respondedAt: number | undefined;
  /** The upstream's status, once it answered. */
  statusCode = 0;
  #resolve!: (answer: UpstreamAnswer) => void;
  #reject!: (error: Error) => void;
  #controller: Dispatcher.DispatchController | undefined;
  #abortReason: Error | undefined;
  #headers: IncomingHttpHeaders = {};
  /** Set while a small body is being collected whole. */
  #chunks: Buffer[] | undefined;
  /** Set once a streamed answer was handed over. */
  #stream: UpstreamBody | undefined;

  constructor(
    dispatcher: Dispatcher,
    options: Dispatcher.DispatchOptions,
    private readonly holdWhole: HoldWhole,
  ) {
    this.answer = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    dispatcher.dispatch(options, this);
  }

  /** Ends the exchange (the client went away, or the gateway answered by itself). Idempotent. */
  abort(): void {
    this.#abortReason ??= new AbortedByGateway('upstream request aborted');
    this.#controller?.abort(this.#abortReason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason) controller.abort(this.#abortReason);
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.respondedAt = performance.now();
    this.statusCode = statusCode;
    if (this.holdWhole(headers)) {
      this.#headers = headers;
      this.#chunks = [];
      return;
    }
    this.#stream = new UpstreamBody(controller);
    this.#resolve({ statusCode, headers, body: this.#stream });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#chunks) this.#chunks.push(chunk);
    else if (this.#stream && !this.#stream.push(chunk)) controller.pause();
  }

  onResponseEnd(): void {
    const chunks = this.#chunks;
    if (chunks) {
      this.#resolve({ statusCode: this.statusCode, headers: this.#headers, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) });
      return;
    }
    if (this.#stream) {
      this.#stream.ended = true;
      this.#stream.push(null);
    }
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // Once a streamed answer was handed over, its stream carries the error; until then the promise does.
    if (this.#stream) {
      this.#stream.ended = true;
      this.#stream.destroy(error);
      return;
    }
    this.#reject(error);
  }
}
