/** An answer the decision gives itself without forwarding and without it being a refusal (preflight, 405). */
export interface EarlyAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
}

const MCP_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'DELETE']);
const ALLOW = { allow: 'GET, POST, DELETE, OPTIONS' } as const;

/**
 * Checklist K7: which methods exist is told only to an authenticated caller. A plain OPTIONS gets 204 with Allow,
 * any other method the MCP transport does not use 405.
 */
export function methodAnswer(method: string): EarlyAnswer | undefined {
  if (MCP_METHODS.has(method)) return undefined;
  return { status: method === 'OPTIONS' ? 204 : 405, headers: ALLOW };
}
