import { z } from 'zod';
import { bindHost, listenerPort, secret } from '../fields.js';
import { optionalSecret, type Secret } from '../secret.js';

/**
 * `decision`: the listener that answers nginx auth_request, Traefik forwardAuth and Envoy ext_authz (HTTP) with the
 * proxy's verdicts. What it cannot decide for a route is warned about in cross-section.ts.
 */

/** The proxies the decision listener answers, each describing the request it holds in its own way. */
export const DECISION_PROXIES = ['nginx', 'traefik', 'envoy'] as const;

/** The proxy that asks the decision listener; its own headers alone describe the request it holds. */
export type DecisionProxy = (typeof DECISION_PROXIES)[number];

/** The header carrying `decision.secret` on every question the proxy asks. */
export const DECISION_SECRET_HEADER = 'X-Mcp-Decision-Secret';

export const decisionSchema = z
  .strictObject({
    proxy: z
      .enum(DECISION_PROXIES, { error: `must be one of ${DECISION_PROXIES.join(', ')}: the proxy that asks (its headers alone describe the request)` })
      .describe(
        'Which proxy asks: nginx (auth_request: X-Original-URI / X-Original-Method), traefik (forwardAuth: X-Forwarded-Uri / X-Forwarded-Method / X-Forwarded-Host) or envoy (ext_authz HTTP service: the request itself under path_prefix). Only that proxy\'s description of the request is read; a question that also carries another proxy\'s description is refused (400). Required.',
      ),
    secret: secret(
      `Shared secret the proxy sends in the ${DECISION_SECRET_HEADER} header of every question, at least 32 characters: the listener answers no one else (a valid client token would otherwise buy a route's upstream credential from anyone who reaches the port). Required unless unauthenticated: true.`,
    )
      .min(32, { error: 'must be at least 32 characters' })
      .optional(),
    unauthenticated: z
      .boolean()
      .default(false)
      .describe('Answer questions without the shared secret (only when nothing but the proxy can reach the listener, e.g. a Unix-socket-like loopback sidecar). Default: false.'),
    host: bindHost('127.0.0.1', 'Bind address; only the proxy asking (nginx, Envoy, Traefik) may reach it.'),
    port: listenerPort(8181),
    path_prefix: z
      .string()
      .regex(/^(\/[A-Za-z0-9\-._~]+)*$/, { error: 'must be empty or start with "/" and not end with "/"' })
      .default('')
      .describe('Envoy ext_authz: the prefix Envoy puts before the original path (its path_prefix). Default: "".'),
  })
  .superRefine((value, ctx) => {
    if (value.secret === undefined && !value.unauthenticated) {
      ctx.addIssue({ code: 'custom', path: ['secret'], message: 'is required (or set unauthenticated: true to answer any caller that reaches the listener)' });
    }
    if (value.secret !== undefined && value.unauthenticated) {
      ctx.addIssue({ code: 'custom', path: ['unauthenticated'], message: 'contradicts secret: set one of them' });
    }
  })
  .optional()
  .describe('Decision listener: answers nginx auth_request, Traefik forwardAuth and Envoy ext_authz (HTTP) with the proxy\'s verdicts. Off unless set.');

/** The decision listener for proxies that ask before forwarding (nginx, Envoy, Traefik). */
export interface DecisionListenerSettings {
  readonly host: string;
  readonly port: number;
  readonly proxy: DecisionProxy;
  /** What the proxy sends in X-Mcp-Decision-Secret; absent only with `unauthenticated: true`. */
  readonly secret: Secret | undefined;
  /** Envoy ext_authz `path_prefix`: stripped from the path to get the original one. */
  readonly pathPrefix: string;
}

export function compileDecision(raw: z.output<typeof decisionSchema>): DecisionListenerSettings | undefined {
  return raw && {
    host: raw.host,
    port: raw.port,
    proxy: raw.proxy,
    secret: optionalSecret(raw.secret),
    pathPrefix: raw.path_prefix,
  };
}
