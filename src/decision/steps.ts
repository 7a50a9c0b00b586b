import type { MaybePromise } from '../lib/maybe-promise.js';
import type { EarlyAnswer } from './responses.js';
import type { DecisionState } from './state.js';
import { readMessage } from './steps/message.js';
import { readMessageWithoutBody } from './steps/message-without-body.js';
import { answerOtherMethods } from './steps/method.js';
import { checkOperationScopes } from './steps/operation-scopes.js';
import { checkOrigin } from './steps/origin.js';
import { answerPreflight } from './steps/preflight.js';
import { takeRateLimit } from './steps/rate-limit.js';
import { matchRoute } from './steps/route.js';
import { checkRouteScopes } from './steps/route-scopes.js';
import { checkSession } from './steps/session.js';
import { takeSlot } from './steps/slot.js';
import { authenticate } from './steps/token.js';
import { resolveUpstreamHeaders } from './steps/upstream-headers.js';

/**
 * One rule of the decision: it passes (nothing, or a promise of nothing), answers early (preflight, 405), or throws
 * (rejects with) the GatewayError that is the refusal. It reads and fills in the request's state.
 */
export type Step = (state: DecisionState) => MaybePromise<EarlyAnswer | undefined | void>;

/** Which asking a step serves: the gateway's own proxy, or the decision listener with or without the body. */
export type StepDoor = 'proxy' | 'listener_with_body' | 'listener_without_body';

const ALL: readonly StepDoor[] = ['proxy', 'listener_with_body', 'listener_without_body'];

export interface StepRow {
  readonly name: string;
  /** `admit`: from the request line and headers, before a body is read; `authorize`: with the body (if any). */
  readonly stage: 'admit' | 'authorize';
  readonly doors: readonly StepDoor[];
  readonly run: Step;
}

/**
 * The decision, in order (ARCHITECTURE.md "One request, end to end"): the order is the contract. Each row names
 * the doors it runs for; docs/architecture.md explains where a new rule goes.
 */
export const STEPS: readonly StepRow[] = [
  { name: 'route', stage: 'admit', doors: ALL, run: matchRoute },
  { name: 'origin', stage: 'admit', doors: ALL, run: checkOrigin },
  { name: 'preflight', stage: 'admit', doors: ALL, run: answerPreflight },
  { name: 'token', stage: 'admit', doors: ALL, run: authenticate },
  { name: 'method', stage: 'admit', doors: ALL, run: answerOtherMethods },
  { name: 'route scopes', stage: 'admit', doors: ALL, run: checkRouteScopes },
  { name: 'rate limit', stage: 'admit', doors: ALL, run: takeRateLimit },
  { name: 'session', stage: 'admit', doors: ALL, run: checkSession },
  { name: 'message', stage: 'authorize', doors: ['proxy', 'listener_with_body'], run: readMessage },
  { name: 'message without body', stage: 'authorize', doors: ['listener_without_body'], run: readMessageWithoutBody },
  { name: 'operation scopes', stage: 'authorize', doors: ALL, run: checkOperationScopes },
  { name: 'upstream headers', stage: 'authorize', doors: ALL, run: resolveUpstreamHeaders },
  { name: 'stream or request slot', stage: 'authorize', doors: ['proxy'], run: takeSlot },
];

/** The steps of one stage for one door, in order. */
export function stepsFor(stage: StepRow['stage'], door: StepDoor): readonly StepRow[] {
  return STEPS.filter((row) => row.stage === stage && row.doors.includes(door));
}
