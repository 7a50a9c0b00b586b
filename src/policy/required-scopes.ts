import type { PolicySettings } from '../config/types.js';
import { targetKinds, type JsonRpcMessageFacts, type TargetKind } from './jsonrpc.js';
import { normalizeResourceUri } from '../config/resource-uri.js';
import { perObject } from '../lib/memo.js';

/**
 * The policy entries of one kind and the key this message names among them: tool and prompt names are exact,
 * resource URIs are compared in their normal form (policy keys are compiled to it). `undefined` key: the
 * operand is missing, not a string, or not a URI.
 */
function target(
  policy: PolicySettings,
  message: JsonRpcMessageFacts,
  kind: TargetKind,
): { readonly scopes: ReadonlyMap<string, readonly string[]>; readonly key: string | undefined } {
  switch (kind) {
    case 'tool':
      return { scopes: policy.tools, key: message.toolName };
    case 'resource':
      return {
        scopes: policy.resources,
        key: message.resourceUri === undefined || policy.resources.size === 0 ? undefined : normalizeResourceUri(message.resourceUri),
      };
    case 'prompt':
      return { scopes: policy.prompts, key: message.promptName };
  }
}

/**
 * MCP 2025-11-25 tasks: these report on, fetch the result of, or cancel an earlier request (a task-augmented
 * `tools/call`; some servers run other requests as tasks too) by its task id alone, which says nothing of the
 * operation. The gateway does not bind task ids to operations, so each needs every scope any operation could.
 */
/** The route's own scopes, deduplicated, once per compiled policy. */
const routeScopesOf = perObject((policy: PolicySettings): readonly string[] => Object.freeze([...new Set(policy.scopes)]));

const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']);

/**
 * Every scope the policy names for any operation, the route's first: what a request needs when the operation it
 * stands for cannot be known (a task method; a door that sees no body). Once per compiled policy.
 */
export const everyPolicyScope = perObject((policy: PolicySettings): readonly string[] => {
  const scopes = new Set(policy.scopes);
  for (const byOperation of [policy.methods, policy.tools, policy.prompts, policy.resources]) {
    byOperation.forEach((extra) => extra.forEach((scope) => scopes.add(scope)));
  }
  return Object.freeze([...scopes]);
});

/**
 * Every scope one request needs: the route's, then the method's, then those of the tool / resource / prompt it
 * names (every method that names one), deduplicated in that order (the order of the 403
 * challenge). Without a message (GET, DELETE) only the route's. A named operand that is missing, not a string or
 * (for resources) without a normal form needs the scopes of every configured operand of that kind: the upstream
 * decides what it runs, so an unreadable name must not be the cheap one. A task method (`tasks/result`, ...) needs
 * every scope the policy names: the operation behind the task could be any.
 */
export function requiredScopes(policy: PolicySettings, message: JsonRpcMessageFacts | undefined): readonly string[] {
  // Most requests need only the route's scopes: one list per policy, not one per request.
  if (message?.method === undefined || !dependsOnMessage(policy)) return routeScopesOf(policy);
  const scopes = new Set(policy.scopes);
  const add = (extra: readonly string[] | undefined): void => extra?.forEach((scope) => scopes.add(scope));
  add(policy.methods.get(message.method));
  if (TASK_METHODS.has(message.method)) add(everyPolicyScope(policy));
  for (const kind of targetKinds(message)) {
    const { scopes: byOperand, key } = target(policy, message, kind);
    if (key === undefined) byOperand.forEach(add);
    else add(byOperand.get(key));
  }
  return [...scopes];
}

/**
 * A request that names a resource the policy cannot place, on a route with resource policies (→ 400): its URI has
 * no normal form (it does not parse, or an encoded `/`, `\` or NUL makes its path ambiguous; config/resource-uri.ts).
 * Without resource policies any URI is the upstream's business.
 */
export function hasUnplaceableResourceUri(policy: PolicySettings, message: JsonRpcMessageFacts): boolean {
  return (
    policy.resources.size > 0 &&
    message.resourceUri !== undefined &&
    targetKinds(message).includes('resource') &&
    normalizeResourceUri(message.resourceUri) === undefined
  );
}

/** The route's policy asks more than its own scopes of some operation: deciding needs the JSON-RPC message. */
export function dependsOnMessage(policy: PolicySettings): boolean {
  return policy.methods.size + policy.tools.size + policy.resources.size + policy.prompts.size > 0;
}
