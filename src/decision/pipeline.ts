import type { MaybePromise } from '../lib/maybe-promise.js';
import type { EarlyAnswer } from './responses.js';
import type { DecisionState } from './state.js';
import { stepsFor, type StepDoor, type StepRow } from './steps.js';

/** Admission is the same for every door (the listener's session binding differs by `state.door`, not by step). */
const ADMIT = stepsFor('admit', 'proxy');
const AUTHORIZE: Readonly<Record<StepDoor, readonly StepRow[]>> = {
  proxy: stepsFor('authorize', 'proxy'),
  listener_with_body: stepsFor('authorize', 'listener_with_body'),
  listener_without_body: stepsFor('authorize', 'listener_without_body'),
};

/**
 * Runs `steps` from `from` on: at once while no step has to wait, so a cached token and a static credential decide
 * without a turn of the microtask queue; as a promise from the first step that waits. A traced request's span hears
 * of each step as it starts (`state.trace`), here and nowhere else.
 */
function run(steps: readonly StepRow[], from: number, state: DecisionState): MaybePromise<EarlyAnswer | undefined> {
  for (let index = from; index < steps.length; index += 1) {
    const step = steps[index] as StepRow;
    state.trace?.step(step.name, step.stage);
    const result = step.run(state);
    if (result === undefined) continue;
    if (result instanceof Promise) return result.then((answer) => answer ?? run(steps, index + 1, state));
    return result;
  }
  return undefined;
}

/**
 * Stage one, from the request line and headers, so a front door can refuse before it reads a body: route,
 * origin, preflight, token, method, route scopes, rate limit, session. An early answer (preflight, 405) or
 * `undefined` to go on. Every caller handles a thrown refusal as well as a rejected one.
 */
export function admit(state: DecisionState): MaybePromise<EarlyAnswer | undefined> {
  const admitted = run(ADMIT, 0, state);
  if (!state.trace) return admitted;
  return admitted instanceof Promise ? admitted.then((answer) => answeredEarly(state, answer)) : answeredEarly(state, admitted);
}

function answeredEarly(state: DecisionState, answer: EarlyAnswer | undefined): EarlyAnswer | undefined {
  if (answer) state.trace?.decided('answered');
  return answer;
}

/**
 * Stage two, with the body when the door has it (`state.body`): the message (or, without it, what may be decided
 * without), operation scopes, the upstream headers and, for the proxy, the caller's slot. Once it returned (or its
 * promise resolved) `state.upstreamHeaders` is what to set upstream.
 */
export function authorize(state: DecisionState): MaybePromise<void> {
  const decided = run(AUTHORIZE[authorizingDoor(state)], 0, state);
  if (decided instanceof Promise) return decided.then(() => state.trace?.decided('allowed'));
  state.trace?.decided('allowed');
  return undefined;
}

function authorizingDoor(state: DecisionState): StepDoor {
  if (state.door === 'proxy') return 'proxy';
  return state.body !== undefined && state.facts.method === 'POST' ? 'listener_with_body' : 'listener_without_body';
}
