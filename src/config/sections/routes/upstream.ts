import { z } from 'zod';
import type { Milliseconds } from '../../duration.js';
import { MIN_TIMEOUT_MS, duration, rule, upstreamUrl } from '../../fields.js';
import { immutableSet } from '../../freeze.js';
import type { Compiled, ConfigProblem } from '../../problem.js';
import { forwardedHeaderProblem } from '../../rules.js';
import { compileIdentity, identitySchema, type IdentitySettings } from './identity.js';
import { compileUpstreamAuth, upstreamAuthSchema, type UpstreamAuth } from './upstream-auth.js';

/** `routes[].upstream`: where a request goes after authorization, with which credential and headers. */

export const upstreamSchema = z
  .strictObject({
    url: upstreamUrl().describe('MCP endpoint of the upstream server; http is allowed (typically a pod-local service).'),
    auth: upstreamAuthSchema,
    identity: identitySchema.optional(),
    validates_mirrored_headers: z
      .boolean()
      .default(false)
      .describe(
        'The upstream refuses a request whose Mcp-Method / Mcp-Name headers contradict its body (MCP 2026-07-28 servers must). Only then may a door that sees no body (the decision listener behind nginx auth_request or Traefik without forwardBody) decide a per-tool/resource/prompt policy from those headers; otherwise such a request passes only with every scope the route names, else 400. Default: false.',
      ),
    forward_headers: z
      .array(z.string().superRefine(rule(forwardedHeaderProblem)))
      .default([])
      .describe(
        'Client request headers forwarded to the upstream on top of the built-in allowlist (README: "Headers the upstream receives"), e.g. [X-MCP-Toolsets]. Values come from the client unverified. Default: [].',
      ),
    timeouts: z
      .strictObject({
        connect: duration('5s', 'Time to establish the TCP/TLS connection.', { min: MIN_TIMEOUT_MS }),
        headers: duration('30s', 'Time until response headers arrive (then 504).', { min: MIN_TIMEOUT_MS }),
        body_idle: duration(0, 'Longest silence on a response body; 0 disables it (SSE streams may idle long).'),
      })
      .prefault({})
      .describe('Upstream timeouts.'),
  })
  .describe('Where requests go after authorization.');

type RawUpstream = z.output<typeof upstreamSchema>;

export interface UpstreamSettings {
  readonly url: URL;
  readonly auth: UpstreamAuth;
  /** Identity assertion sent upstream; absent → none. */
  readonly identity: IdentitySettings | undefined;
  /** Client headers forwarded beyond the built-in allowlist, lowercase. */
  readonly forwardHeaders: ReadonlySet<string>;
  /** The upstream refuses Mcp-Method / Mcp-Name headers that contradict the body: a body-less door may decide by them. */
  readonly validatesMirroredHeaders: boolean;
  /** Time to establish the TCP/TLS connection. */
  readonly connectTimeout: Milliseconds;
  /** Time from sending the request to receiving response headers (→ 504). */
  readonly headersTimeout: Milliseconds;
  /** Longest silence allowed on a response body; 0 disables it (long-lived SSE streams). */
  readonly bodyIdleTimeout: Milliseconds;
}

/** `at` is the route's path (`routes.0`). */
export function compileUpstream(raw: RawUpstream, at: string): Compiled<UpstreamSettings> {
  const url = new URL(raw.url);
  const settings: UpstreamSettings = {
    url,
    auth: compileUpstreamAuth(raw.auth),
    identity: raw.identity && compileIdentity(raw.identity, url),
    forwardHeaders: immutableSet(raw.forward_headers.map((name) => name.toLowerCase())),
    validatesMirroredHeaders: raw.validates_mirrored_headers,
    connectTimeout: raw.timeouts.connect,
    headersTimeout: raw.timeouts.headers,
    bodyIdleTimeout: raw.timeouts.body_idle,
  };
  return { settings, problems: identityHeaderProblems(raw, at), warnings: [] };
}

/** The identity header must not be the header an upstream credential travels in. */
function identityHeaderProblems(raw: RawUpstream, at: string): ConfigProblem[] {
  const { auth, identity } = raw;
  const credentialHeader = auth.type === 'header' ? auth.name : auth.type === 'user_oauth' ? auth.header : undefined;
  if (!identity || credentialHeader?.toLowerCase() !== identity.header.toLowerCase()) return [];
  const key = auth.type === 'header' ? 'name' : 'header';
  return [{ path: `${at}.upstream.identity.header`, message: `must differ from upstream.auth.${key}` }];
}
