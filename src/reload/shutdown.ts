import type { SseStreams } from '../observability/sse-streams.js';
import type { Cancel } from './runtime-switch.js';

export interface ShutdownSteps {
  /** Readiness turns false and new requests get 503, at once. */
  readonly drain: () => void;
  /** Requests whose body is still arriving get 503 now and their connection closed: never waited for. */
  readonly refuseHalfSent: () => void;
  /** Requests nothing has answered yet get 503; resolves once those answers are written (bounded). */
  readonly answerUnanswered: () => Promise<void>;
  readonly streams: Pick<SseStreams, 'endFrom'>;
  /** Resolves when no request is in flight. */
  readonly idle: () => Promise<void>;
  /** Stops listening; resolves when every connection is closed. */
  readonly closeListener: () => Promise<void>;
  /** Cuts every connection still open. */
  readonly dropConnections: () => void;
  readonly graceMs: number;
  /** Injected in tests; default `setTimeout`. */
  readonly schedule?: (callback: () => void, delayMs: number) => Cancel;
}

export type ShutdownResult = 'clean' | 'forced';

const standaloneStream = (httpMethod: string) => httpMethod === 'GET';

function timeout(callback: () => void, delayMs: number): Cancel {
  const timer = setTimeout(callback, delayMs);
  return () => clearTimeout(timer);
}

/**
 * Graceful stop: drain; refuse requests still sending their body (a stalled upload must not
 * hold the process); end standalone GET event streams cleanly so clients reconnect elsewhere with Last-Event-ID;
 * let in-flight requests — POSTs, including POST responses streamed as SSE — finish; at the grace deadline end
 * every stream, answer what is still unanswered with 503, and cut what is left. Resolves once the listener is
 * closed.
 */
export async function shutdown(steps: ShutdownSteps): Promise<ShutdownResult> {
  const schedule = steps.schedule ?? timeout;
  let result: ShutdownResult = 'clean';
  steps.drain();
  steps.refuseHalfSent();
  steps.streams.endFrom(standaloneStream);
  const cancel = schedule(() => {
    result = 'forced';
    steps.streams.endFrom(() => true);
    void steps.answerUnanswered().then(steps.dropConnections);
  }, steps.graceMs);
  try {
    await steps.idle();
    await steps.closeListener();
  } finally {
    cancel();
  }
  return result;
}
