import { startGateway, type RunningGateway } from './gateway.js';
import { startTestIssuer, type TestIssuer } from './issuer.js';
import { startTestUpstream, type TestUpstream } from './upstream.js';
import { suiteValue } from './suite-value.js';

/** What a JWT route points at: the issuer whose tokens it accepts and the upstream it forwards to. */
export interface JwtRouteTarget {
  readonly issuer: TestIssuer;
  readonly upstream: { readonly url: string };
}

/**
 * A `routes:` list item serving /<name>/mcp that accepts ES256 access tokens of `target.issuer` and forwards to
 * `target.upstream`. `upstreamKeys` go inside `upstream: { url, … }` (YAML flow style); write the route keys a test
 * is about (policy, sessions, cors…) on the lines after it, indented four spaces.
 */
export function jwtRoute(name: string, target: JwtRouteTarget, upstreamKeys?: string): string {
  const upstream = upstreamKeys === undefined ? target.upstream.url : `${target.upstream.url}, ${upstreamKeys}`;
  return [
    `  - name: ${name}`,
    `    path: /${name}/mcp`,
    `    upstream: { url: ${upstream} }`,
    `    authorization_servers: [${target.issuer.issuer}]`,
    `    tokens: { jwt: { issuer: ${target.issuer.issuer}, algorithms: [ES256] } }`,
  ].join('\n');
}

export interface JwtStack {
  readonly issuer: TestIssuer;
  readonly upstream: TestUpstream;
  readonly gw: RunningGateway;
  /** Closes the gateway, then the issuer and the upstream. */
  readonly close: () => Promise<void>;
}

/** Starts a test issuer and a recording upstream, then the gateway built from `configYaml` of the two. */
export async function startJwtStack(
  configYaml: (target: { readonly issuer: TestIssuer; readonly upstream: TestUpstream }) => string,
  options?: Parameters<typeof startGateway>[1],
): Promise<JwtStack> {
  const [issuer, upstream] = await Promise.all([startTestIssuer(), startTestUpstream()]);
  const closeServers = () => Promise.all([issuer.close(), upstream.close()]).then(() => undefined);
  let gw: RunningGateway;
  try {
    gw = await startGateway(configYaml({ issuer, upstream }), options);
  } catch (error) {
    await closeServers();
    throw error;
  }
  return {
    issuer,
    upstream,
    gw,
    close: async () => {
      await gw.close();
      await closeServers();
    },
  };
}

/**
 * Registers hooks that start a JwtStack before the tests of the enclosing file (or describe block) and close it
 * after them; the returned stack is readable from those hooks and tests on.
 */
export function setupJwtStack(...args: Parameters<typeof startJwtStack>): Omit<JwtStack, 'close'> {
  return suiteValue('the JWT stack', () => startJwtStack(...args), (stack) => stack.close());
}
