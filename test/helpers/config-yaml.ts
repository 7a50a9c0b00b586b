/**
 * A valid one-route config serving `path`, its hosts placeholders that nothing listens on: for tests that only
 * parse, check or reload config.
 */
export function oneRouteYaml(path: string, upstreamUrl = 'http://127.0.0.1:3000/mcp'): string {
  return `public_url: https://gw.example.com
routes:
  - name: calc
    path: ${path}
    upstream: { url: "${upstreamUrl}" }
    authorization_servers: [https://as.example.com]
    tokens: { jwt: { issuer: https://as.example.com } }
`;
}
