import { isIPv6 } from 'node:net';
import { z } from 'zod';
import { DURATION_PATTERN, MAX_DURATION_MS, formatDuration, parseDuration } from './duration.js';
import { privateKeyProblem } from './private-key.js';
import { SCOPE_PATTERN } from './rules.js';
import { urlProblem } from './url.js';
import type { UrlRules } from './url.js';

/**
 * Field builders the sections share: one definition per kind of value (duration, secret, URL, scope list, ...), so its
 * checks, JSON Schema and, where the builder knows the default, the `Default:` text are written once.
 */

/** Adapts a `reason | undefined` rule (rules.ts, url.ts, ...) to zod. */
export function rule<T>(problem: (value: T) => string | undefined) {
  return (value: T, ctx: z.RefinementCtx) => {
    const message = problem(value);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message });
  };
}

const STRICT_URL: UrlRules = { blockInternalHosts: true, requireNormalForm: true };

/** A URL the gateway advertises or fetches: https (http only per cross-section.ts), no userinfo/query/fragment. */
export function strictUrl(description: string) {
  return z
    .string()
    .superRefine(rule((value: string) => urlProblem(value, STRICT_URL)))
    .meta({ format: 'uri' })
    .describe(description);
}

/** The upstream's endpoint or RFC 8707 resource: any absolute http(s) URI; upstreams may be pod-local. */
export function upstreamUrl() {
  return z
    .string()
    .superRefine(rule((value: string) => urlProblem(value, { blockInternalHosts: false, requireNormalForm: false })))
    .meta({ format: 'uri' });
}

export const MIN_TIMEOUT_MS = 1;

interface DurationLimits {
  readonly min?: number;
  readonly max?: number;
}

export function duration(defaultValue: number | string, description: string, limits: DurationLimits = {}) {
  const { min = 0, max = MAX_DURATION_MS } = limits;
  const message = 'must be a number of seconds or a duration like 500ms, 30s, 5m, 1h';
  return z
    .union([
      z.number().nonnegative({ error: message }),
      z.string().regex(DURATION_PATTERN, { error: message }),
    ], { error: message })
    // Both branches are valid durations by now.
    .transform((value) => parseDuration(value) ?? Number.NaN)
    .pipe(
      z
        .number()
        .min(min, { error: `must be at least ${formatDuration(min)}` })
        .max(max, { error: `must be at most ${formatDuration(max)}` }),
    )
    .prefault(defaultValue)
    .describe(`${description} Seconds, or a string like 500ms, 30s, 5m, 1h, 30d. Default: ${defaultValue}.`);
}

export const scope = z
  .string()
  .regex(SCOPE_PATTERN, { error: 'must be an RFC 6749 scope token: visible ASCII without space, " or \\' });

export function scopeList(description: string) {
  return z.array(scope).default([]).describe(`${description} Default: [].`);
}

/** A list of scopes, or one OAuth `scope` value (space-separated, RFC 6749 §3.3) as an authorization server shows it. */
export function scopeListOrString(description: string) {
  const spaceSeparated = z
    .string()
    .transform((value) => value.split(' ').filter((token) => token !== ''))
    .pipe(z.array(scope));
  return z
    .union([z.array(scope), spaceSeparated])
    .default([])
    .describe(`${description} A list, or one space-separated string ("calc:read calc:write"). Default: [].`);
}

/** A credential: literal values are allowed but warned about; references are resolved before validation. */
export function secret(description: string) {
  return z
    .string()
    .min(1, { error: 'must not be empty' })
    .describe(`${description} A secret: write \${env:NAME} or \${file:/absolute/path}.`);
}

/** A private signing key (JWK JSON or PEM), always a secret reference in production. */
export function privateKey(description: string, only?: 'ES256') {
  return secret(`${description} A JWK (JSON) or PEM private key.`).superRefine(
    rule((value: string) => privateKeyProblem(value, only)),
  );
}

export const CLIENT_SECRET_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

/** How a client secret is sent to an authorization server (RFC 6749 §2.3.1: HTTP Basic, or in the form body). */
export type ClientSecretMethod = (typeof CLIENT_SECRET_METHODS)[number];

export function clientSecretMethod(description: string) {
  return z.enum(CLIENT_SECRET_METHODS).default('client_secret_basic').describe(description);
}

/** A listener's bind address; `description` ends before the default, which is appended. */
export function bindHost(defaultHost: string, description: string) {
  return z.string().min(1).default(defaultHost).describe(`${description} Default: ${defaultHost}.`);
}

/** A listener's TCP port; 0 takes any free one. */
export function listenerPort(defaultPort: number) {
  return z.number().int().min(0).max(65535).default(defaultPort).describe(`Port. Default: ${defaultPort}.`);
}

const HOSTNAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;
const HOST_PORT_PATTERN = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/;

/** `host:port` (IPv6 in brackets) as ioredis wants it; undefined when malformed. */
function parseHostPort(value: string): { host: string; port: number } | undefined {
  const match = HOST_PORT_PATTERN.exec(value);
  if (!match) return undefined;
  const [, ipv6, name, portText] = match;
  const port = Number(portText);
  if (port < 1 || port > 65_535) return undefined;
  if (ipv6 !== undefined) return isIPv6(ipv6) ? { host: ipv6, port } : undefined;
  return name !== undefined && HOSTNAME_PATTERN.test(name) ? { host: name, port } : undefined;
}

export function hostPortList(description: string) {
  const hostPort = z.string().transform((value, ctx) => {
    const parsed = parseHostPort(value);
    if (parsed !== undefined) return parsed;
    ctx.addIssue({ code: 'custom', message: 'expected host:port' });
    return z.NEVER;
  });
  return z.array(hostPort).min(1, { error: 'at least one host:port is required' }).describe(description);
}
