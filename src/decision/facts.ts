/** Headers as Node parses them: lowercase names; repeated lines joined (or kept as an array for a few names). */
export type HeaderMap = Readonly<Record<string, string | string[] | undefined>>;

/**
 * What the decision knows about a request: no framework object, so the proxy and the decision listener (nginx,
 * Traefik, Envoy asking about a request they hold) hand over the same facts.
 */
export interface RequestFacts {
  readonly method: string;
  /** Path and query as received (`/calc/mcp?x=1`), never decoded. */
  readonly url: string;
  readonly headers: HeaderMap;
  /** Header lines as received, name and value alternating (Node's `rawHeaders`): repeated lines stay visible. */
  readonly rawHeaders: readonly string[];
  /** The Host the client asked for (DNS rebinding protection): see src/forwarded.ts for when a proxy's word counts. */
  readonly host: string | undefined;
  /** The client's address, for per-client fairness in the introspection bulkhead (src/forwarded.ts). */
  readonly clientAddress: string | undefined;
  /** The connection the request came on: a verifier hashes a token once per connection that keeps sending it. */
  readonly connection?: object | undefined;
}

/** The path of a request target, without its query. */
export function pathOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}

/** A header's value; the first line when Node kept several. */
export function singleHeader(headers: HeaderMap, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
