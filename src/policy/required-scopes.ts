import type { PolicySettings } from '../config/types.js';
import { targetKind, type JsonRpcMessageFacts, type TargetKind } from './jsonrpc.js';

function target(
  policy: PolicySettings,
  message: JsonRpcMessageFacts,
  kind: TargetKind,
): { readonly scopes: ReadonlyMap<string, readonly string[]>; readonly key: string | undefined } {
  switch (kind) {
    case 'tool':
      return { scopes: policy.tools, key: message.toolName };
    case 'resource':
      return { scopes: policy.resources, key: message.resourceUri };
    case 'prompt':
      return { scopes: policy.prompts, key: message.promptName };
  }
}

/**
 * Every scope one request needs: the route's, then the method's, then the tool's / resource's / prompt's,
 * deduplicated in that order (the order of the 403 challenge). Without a message (GET, DELETE) only the
 * route's. A targeted method whose operand is missing or not a string needs the scopes of every configured
 * operand of that kind: the upstream decides what it runs, so an unreadable name must not be the cheap one.
 */
export function requiredScopes(policy: PolicySettings, message: JsonRpcMessageFacts | undefined): string[] {
  const scopes = new Set(policy.scopes);
  const add = (extra: readonly string[] | undefined): void => extra?.forEach((scope) => scopes.add(scope));
  if (message?.method === undefined) return [...scopes];
  add(policy.methods.get(message.method));
  const kind = targetKind(message.method);
  if (kind !== undefined) {
    const { scopes: byOperand, key } = target(policy, message, kind);
    if (key === undefined) byOperand.forEach(add);
    else add(byOperand.get(key));
  }
  return [...scopes];
}
