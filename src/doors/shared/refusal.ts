import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, isGatewayError, refusalResponse, type DecisionState, type ErrorResponse } from '../../decision/index.js';
import { UNMATCHED_ROUTE, type GatewayMetrics } from '../../observability/metrics.js';

/**
 * Framework errors onto the gateway's closed set of refusals: a body over the limit, a media type fastify refused,
 * any other client-side error with its precise 4xx status (a generic body: nothing of the request is echoed), and
 * everything else an internal error.
 */
export function refusalOf(error: FastifyError | Error): GatewayError {
  if (isGatewayError(error)) return error;
  const { code, statusCode } = error as FastifyError;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new GatewayError('payload_too_large');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
    return new GatewayError('invalid_jsonrpc', { reason: code });
  }
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) return new GatewayError('bad_request', { status: statusCode, reason: code });
  return new GatewayError('internal_error', { cause: error });
}

/** What a refusal reads of the refused request, whichever door serves it. */
export interface RefusedRequest {
  readonly decision: DecisionState | null;
  /** The request's logger (its lines carry the request id). */
  readonly log: FastifyBaseLogger;
}

/**
 * The answer to a refusal, as the response table renders it, counted by code and logged (warn when the gateway or
 * an upstream failed, info for a client's mistake). Every door sends refusals through this.
 */
export function refusalAnswer(metrics: GatewayMetrics, request: RefusedRequest, error: GatewayError): ErrorResponse {
  const route = request.decision?.entry?.route.name;
  metrics.refusal(route ?? UNMATCHED_ROUTE, error.code);
  request.decision?.trace?.decided(error.code);
  if (error.code === 'internal_error') request.log.error({ err: error.cause }, 'unexpected error');
  else {
    const level = error.code === 'auth_unavailable' || error.code.startsWith('upstream_') ? 'warn' : 'info';
    request.log[level]({ code: error.code, reason: error.reason, route }, 'request refused');
  }
  return refusalResponse(error, request.decision);
}

/**
 * Sends a refusal on a fastify reply (`refusalAnswer`). A refusal before the body was read also closes the
 * connection (the request lifecycle, lifecycle.ts).
 */
export function sendRefusal(metrics: GatewayMetrics, request: FastifyRequest, reply: FastifyReply, error: GatewayError): void {
  const response = refusalAnswer(metrics, request, error);
  void reply.code(response.statusCode).headers(response.headers).send(response.body);
}
