import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { oneRouteYaml } from '../helpers/config-yaml.js';

/** K16: check-config refuses a route path on the gateway's own paths (it would shadow them or be shadowed). */

describe('K16 route paths on the gateway\'s own paths', () => {
  it.each(['/healthz', '/readyz', '/metrics', '/.well-known/oauth-protected-resource', '/.well-known/jwks.json', '/.well-known'])(
    'K16 %s → refused with the path named',
    (path) => {
      const result = parseConfig(oneRouteYaml(path));
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.problems.map((problem) => problem.path)).toEqual(['routes.0.path']);
    },
  );

  it.each(['/healthz/mcp', '/metrics-mcp', '/mcp'])('K16 neighbours that do not collide (%s) are accepted', (path) => {
    expect(parseConfig(oneRouteYaml(path)).ok).toBe(true);
  });
});
