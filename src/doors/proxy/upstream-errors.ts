import type { RefusalCode } from '../../decision/index.js';

export type UpstreamFailure = Extract<RefusalCode, 'upstream_unreachable' | 'upstream_timeout'>;

/** Codes of errors meaning the upstream accepted the request but did not answer in time (→ 504): undici's timeouts. */
const TIMEOUT_CODES: ReadonlySet<string> = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Codes meaning no conversation with the upstream took place or it broke off (→ 502). A connect timeout is here,
 * not with the timeouts: the upstream is not reachable, it is not slow.
 */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** Wrappers nest a few levels at most; the bound keeps a cyclic `cause` from looping. */
const MAX_CAUSE_DEPTH = 8;

function codeOf(error: object): string | undefined {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Maps a failed upstream request to the gateway error the client gets. Walks the `cause` chain from the outside
 * in (a wrapper may carry the undici error as its cause); the first recognised code decides. Anything
 * unrecognised is `upstream_unreachable`: a timeout is only claimed when known.
 */
export function classifyUpstreamFailure(error: unknown): UpstreamFailure {
  let current: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && typeof current === 'object' && current !== null; depth++) {
    const code = codeOf(current);
    if (code !== undefined && TIMEOUT_CODES.has(code)) return 'upstream_timeout';
    if (code !== undefined && UNREACHABLE_CODES.has(code)) return 'upstream_unreachable';
    // AbortSignal.timeout() rejects with a DOMException named TimeoutError and a numeric code.
    if ((current as { name?: unknown }).name === 'TimeoutError') return 'upstream_timeout';
    current = (current as { cause?: unknown }).cause;
  }
  return 'upstream_unreachable';
}
