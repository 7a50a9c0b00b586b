/**
 * The decision's public face: what the front doors (src/doors/) and the wiring root (src/gateway/) use, and what the
 * services behind the ports (auth/, credentials/, grants/, ...) build on. Nothing outside decision/ imports past
 * this file (eslint.config.js holds that boundary).
 */
export { answerStarted, listRewrite, recordAnswer, upstreamRefusal, type MessageRewrite, type UpstreamAnswer } from './after-answer.js';
export { B64TOKEN } from './bearer-token.js';
export { advertisedScopes, challengeSchemes, challengeScopes, routeChallenge, type ChallengeContext, type ChallengeSchemes } from './challenge.js';
export { PUBLIC_DOCUMENT_CORS, publicDocumentPreflightHeaders } from './cors.js';
export { carriesLink, elicitationAnswer, type ElicitationAnswer, type ElicitationRequest } from './elicitation.js';
export { pathOf, singleHeader, type HeaderMap, type RequestFacts } from './facts.js';
export { admit, authorize } from './pipeline.js';
export type {
  AuthContext,
  BindingState,
  DecisionRuntime,
  DecisionTrace,
  DpopProofChecker,
  DpopRequest,
  IdentityAsserter,
  PrincipalSlots,
  RateLimiter,
  RouteRuntime,
  SessionBindings,
  TokenVerifier,
  UpstreamCredentialProvider,
  VerifyRequest,
} from './ports.js';
export { GatewayError, isGatewayError, type Refusal, type RefusalCode, type UrlElicitation } from './refusal.js';
export { errorResponse, refusalResponse, type EarlyAnswer, type ErrorResponse } from './responses.js';
export { createDecisionState, NO_RESPONSE_HEADERS, type DecisionState, type Door } from './state.js';
export { STEPS, type StepRow } from './steps.js';
