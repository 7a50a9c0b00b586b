import { z } from 'zod';
import { scope, scopeList } from '../../fields.js';
import { immutableMap } from '../../freeze.js';
import type { Compiled, ConfigProblem } from '../../problem.js';
import { normalizeResourceUri, resourceUriForm } from '../../resource-uri.js';

/** `routes[].policy`: the scopes a valid token needs, for the route and per JSON-RPC operation. */

const scopeMap = (what: string) =>
  z.record(z.string().min(1), z.array(scope)).default({}).describe(`Extra scopes per ${what}. Default: {}.`);

export const policySchema = z
  .strictObject({
    scopes: scopeList('Scopes needed for anything on this route.'),
    tools: scopeMap('tool name (tools/call)'),
    methods: scopeMap('JSON-RPC method'),
    resources: scopeMap(
      'resource URI (resources/read, resources/subscribe, resources/unsubscribe, completion/complete of a ref/resource); keys are exact URIs (a URI template is refused) and are compared with requested URIs in their normal form, which has no userinfo, query or fragment (README: "Which spellings a resource policy covers")',
    ),
    prompts: scopeMap('prompt name (prompts/get, completion/complete of a ref/prompt)'),
    hide_unauthorized: z
      .boolean()
      .default(false)
      .describe('Remove tools, resources and prompts the caller lacks scopes for from list results. Default: false.'),
    implies: z
      .record(scope, z.array(scope))
      .default({})
      .describe('Scope hierarchy, e.g. {"calc:admin": [calc:write]}: a granted key also grants its values (transitively). Default: {}.'),
    upfront_scopes: z
      .boolean()
      .default(false)
      .describe(
        'The first 401 challenge (and scopes_supported) names every scope an operation on this route can require, ' +
          'the broadest of an `implies` chain only, so a client that cannot step up (it answers a 403 with a ' +
          'refresh, or ignores the challenge scope) gets everything at its first authorization, at the price of ' +
          'tokens broader than each task needs. Default: false (the challenge names the route scopes; an operation ' +
          'that needs more answers 403 insufficient_scope and the client authorizes again: narrower tokens, but ' +
          'such clients fail that operation). README: "Which scopes a client asks for".',
      ),
    challenge_scopes: z
      .array(
        scope.refine((value) => value !== 'offline_access', {
          error: 'offline_access must not be asked for by a protected resource',
        }),
      )
      .default([])
      .describe(
        'Scopes every challenge names (the scope= of WWW-Authenticate, 401 and 403, after the scopes needed) and ' +
          'scopes_supported lists, but no token needs to hold: for an authorization server that refuses any ' +
          'authorization request without them, e.g. [openid]. Default: [].',
      ),
  })
  .prefault({})
  .describe('Scopes required on top of a valid token.');

export type RawPolicy = z.output<typeof policySchema>;

/** Extra scopes per JSON-RPC operation, on top of `PolicySettings.scopes`. Keys are exact names / URIs. */
export interface PolicySettings {
  readonly scopes: readonly string[];
  readonly tools: ReadonlyMap<string, readonly string[]>;
  readonly methods: ReadonlyMap<string, readonly string[]>;
  readonly resources: ReadonlyMap<string, readonly string[]>;
  readonly prompts: ReadonlyMap<string, readonly string[]>;
  /** Remove list entries (tools, resources, prompts) the caller lacks scopes for. */
  readonly hideUnauthorized: boolean;
  /** Scope → every scope it grants besides itself, already transitive (cycles resolved). */
  readonly implies: ReadonlyMap<string, readonly string[]>;
  /**
   * With `upfront_scopes`: every scope an operation on the route can require, none implied by another listed one
   * (route scopes first, then methods, tools, prompts, resources). Undefined when off.
   */
  readonly upfrontScopes?: readonly string[] | undefined;
  /** Named in every challenge and in scopes_supported, never required of a token. */
  readonly challengeScopes: readonly string[];
}

/**
 * `at` is the route's path (`routes.0`); `scopesSupported` what its metadata advertises: a scope the policy demands
 * beyond it is warned about, as clients cannot learn to request it.
 */
export function compilePolicy(raw: RawPolicy, at: string, scopesSupported: readonly string[]): Compiled<PolicySettings> {
  const toMap = (record: Record<string, string[]>) => immutableMap(Object.entries(record));
  const implies = impliedScopes(raw.implies);
  const operationScopes = [raw.methods, raw.tools, raw.prompts, raw.resources].flatMap((table) => Object.values(table).flat());
  const settings: PolicySettings = {
    scopes: raw.scopes,
    tools: toMap(raw.tools),
    methods: toMap(raw.methods),
    // Keyed by the normal form requests are compared in (resource-uri.ts); keys without one are refused below.
    resources: immutableMap(Object.entries(raw.resources).map(([uri, scopes]) => [normalizeResourceUri(uri) ?? uri, scopes])),
    prompts: toMap(raw.prompts),
    hideUnauthorized: raw.hide_unauthorized,
    implies,
    upfrontScopes: raw.upfront_scopes ? broadestScopes([...raw.scopes, ...operationScopes], implies) : undefined,
    challengeScopes: [...new Set(raw.challenge_scopes)],
  };
  return { settings, problems: resourceKeyProblems(raw, at), warnings: unadvertisedScopeWarnings(raw, at, scopesSupported) };
}

/**
 * The distinct scopes of `scopes` without those another listed scope implies: asking for the rest grants them
 * all. Of scopes that imply each other, the first listed stays.
 */
export function broadestScopes(scopes: readonly string[], implies: ReadonlyMap<string, readonly string[]>): string[] {
  const distinct = [...new Set(scopes)];
  const implied = (scope: string, by: string) => implies.get(by)?.includes(scope) ?? false;
  /** `other` stands for `scope`: it implies it, and is strictly broader or, as broad, listed earlier. */
  const covers = (other: string, otherIndex: number, scope: string, index: number) =>
    other !== scope && implied(scope, other) && (!implied(other, scope) || otherIndex < index);
  return distinct.filter((scope, index) => !distinct.some((other, otherIndex) => covers(other, otherIndex, scope, index)));
}

/** The transitive closure of `implies`: every scope a granted scope stands for, cycles included only once. */
export function impliedScopes(implies: Readonly<Record<string, readonly string[]>>): ReadonlyMap<string, readonly string[]> {
  const closure = Object.keys(implies).map((start): [string, string[]] => {
    const seen = new Set<string>([start]);
    const pending = [...(implies[start] ?? [])];
    for (let scope = pending.pop(); scope !== undefined; scope = pending.pop()) {
      if (seen.has(scope)) continue;
      seen.add(scope);
      pending.push(...(implies[scope] ?? []));
    }
    seen.delete(start);
    return [start, [...seen]];
  });
  return immutableMap(closure);
}

/** Why a `policy.resources` key is refused: a URI template, or a URI without a normal form. */
const REFUSED_RESOURCE_KEY = {
  template:
    'is a URI template: keys are exact URIs, so the resources it expands to (resources/read of each) would not be covered; ' +
    'list each resource URI, or require a scope of resources/read in policy.methods',
  not_a_uri: 'must be an absolute URI (scheme:...)',
  ambiguous_separator: "must not hold an encoded '/', '\\' or NUL (%2F, %5C, %00) or a '\\' in its host or path: servers resolve those differently",
} as const;

/** RFC 6570 expressions are braced; no URI holds a raw brace. */
const TEMPLATE_EXPRESSION = /[{}]/;

/**
 * `policy.resources` keys are compared in their normal form (src/config/resource-uri.ts): each must have one, and
 * two keys must not name the same resource (also when they differ only in query or userinfo, which the normal form
 * drops), or one spelling's scopes would silently replace the other's. A URI template is refused: it would only
 * ever match itself (completions, the template listing), never the URIs a server resolves through it, and matching
 * those exactly means matching as each server does (the SDK matches its regex against the whole href, query and
 * fragment included).
 */
function resourceKeyProblems(raw: RawPolicy, at: string): ConfigProblem[] {
  const seen = new Map<string, string>();
  return Object.keys(raw.resources).flatMap((uri): ConfigProblem[] => {
    const path = `${at}.policy.resources.${uri}`;
    if (TEMPLATE_EXPRESSION.test(uri)) return [{ path, message: REFUSED_RESOURCE_KEY.template }];
    const form = resourceUriForm(uri);
    if ('refused' in form) return [{ path, message: REFUSED_RESOURCE_KEY[form.refused] }];
    const first = seen.get(form.normal);
    seen.set(form.normal, uri);
    return first === undefined ? [] : [{ path, message: `names the same resource as "${first}" (both normalise to "${form.normal}")` }];
  });
}

/** Scopes a policy demands but the PRM does not advertise: clients cannot learn to request them. */
function unadvertisedScopeWarnings(raw: RawPolicy, at: string, scopesSupported: readonly string[]): string[] {
  const supported = new Set(scopesSupported);
  const lists: [string, readonly string[]][] = [[`${at}.policy.scopes`, raw.scopes]];
  for (const kind of ['tools', 'methods', 'resources', 'prompts'] as const) {
    for (const [name, scopes] of Object.entries(raw[kind])) {
      lists.push([`${at}.policy.${kind}.${name}`, scopes]);
    }
  }
  return lists.flatMap(([path, scopes]) =>
    [...new Set(scopes)]
      .filter((scope) => !supported.has(scope))
      .map((scope) => `${path}: scope "${scope}" is not in scopes_supported`),
  );
}

/** Whether any operation (tool, method, resource, prompt) has scopes of its own. */
export function decidesPerOperation(raw: RawPolicy): boolean {
  return [raw.tools, raw.methods, raw.resources, raw.prompts].some((byName) => Object.keys(byName).length > 0);
}
