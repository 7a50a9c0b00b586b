import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CONFIG_JSON_SCHEMA_PATH,
  CONFIG_REFERENCE_PATH,
  renderConfigJsonSchema,
  renderConfigReferenceMarkdown,
} from '../../../scripts/write-schema.js';

describe('schema/config.schema.json', () => {
  it('is up to date with src/config/schema.ts (run `npm run schema`)', () => {
    expect(readFileSync(CONFIG_JSON_SCHEMA_PATH, 'utf8')).toBe(renderConfigJsonSchema());
  });

  it('docs/configuration.md is up to date and lists every key with its default (run `npm run schema`)', () => {
    const reference = renderConfigReferenceMarkdown();
    expect(readFileSync(CONFIG_REFERENCE_PATH, 'utf8')).toBe(reference);
    expect(reference).toContain('| `routes[].tokens.jwt.issuer` | string | yes |');
    expect(reference).toContain('| `routes[].upstream.auth (type: bearer).token` |');
    expect(reference).toMatch(/`routes\[\]\.tokens\.introspection\.cache\.max_ttl` .*Default: 60s/);
  });

  it('describes the file operators write: strict objects, defaults in input form', () => {
    interface Node {
      additionalProperties?: unknown;
      required?: string[];
      default?: unknown;
      items?: Node;
      properties?: Record<string, Node>;
    }
    const schema = JSON.parse(renderConfigJsonSchema()) as Node;
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toEqual(['public_url', 'routes']);
    const timeouts = schema.properties?.routes?.items?.properties?.upstream?.properties?.timeouts?.properties ?? {};
    expect(timeouts.connect?.default).toBe('5s');
    expect(timeouts.body_idle?.default).toBe(0);
  });
});
