import { GatewayError } from '../refusal.js';
import { admitted, type DecisionState } from '../state.js';

/** A slot frees when one of the caller's streams or requests ends, at no knowable time: a modest wait. */
const SLOT_RETRY_AFTER_MS = 5_000;

/**
 * One of the caller's slots, taken before anything is forwarded so a refusal (429) never follows a tool call the
 * upstream already ran: a standalone GET takes a stream slot (`limits.max_streams_per_principal`), a POST or
 * DELETE a request slot (`limits.max_concurrent_requests_per_principal`). The stream cap counts long-lived
 * streams, not the tool calls every spec client sends with `Accept: text/event-stream`
 * (test/security/stream-cap.test.ts). The proxy door gives the slot back (`state.releaseSlot`) when the answer
 * ends, a GET's at once when its answer is not a stream (after-answer.ts).
 */
export function takeSlot(state: DecisionState): void {
  const { auth } = admitted(state);
  const { limits } = state.runtime.config;
  const { slots } = state.runtime;
  const streaming = state.facts.method === 'GET';
  const release = streaming
    ? slots.streams.acquire(auth, limits.maxStreamsPerPrincipal)
    : slots.requestsInFlight.acquire(auth, limits.maxConcurrentRequestsPerPrincipal);
  if (!release) {
    throw new GatewayError(streaming ? 'too_many_streams' : 'too_many_requests', { reason: 'principal_slots_full', retryAfterMs: SLOT_RETRY_AFTER_MS });
  }
  state.releaseSlot = release;
}
