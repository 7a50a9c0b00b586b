import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { configSchema } from '../src/config/schema.js';
import { renderConfigReference } from './config-reference.js';
import { allowReferences } from './json-schema-references.js';

/** Where the JSON Schema for editors and the Helm chart lives; a test fails when it is stale. */
export const CONFIG_JSON_SCHEMA_PATH = fileURLToPath(new URL('../schema/config.schema.json', import.meta.url));

/** The human reference of every key, rendered from the JSON Schema. */
export const CONFIG_REFERENCE_PATH = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

export function renderConfigReferenceMarkdown(): string {
  return renderConfigReference(JSON.parse(renderConfigJsonSchema()) as Parameters<typeof renderConfigReference>[0]);
}

/** The JSON Schema of the config file as written by operators (input side: defaults are optional). */
export function renderConfigJsonSchema(): string {
  const schema = z.toJSONSchema(configSchema, { io: 'input', target: 'draft-2020-12' });
  // Editors see the file before references are resolved: `key_secret: ${env:X}` must not be flagged.
  return `${JSON.stringify(allowReferences(schema), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(CONFIG_JSON_SCHEMA_PATH, renderConfigJsonSchema());
  writeFileSync(CONFIG_REFERENCE_PATH, renderConfigReferenceMarkdown());
  console.log(`wrote ${CONFIG_JSON_SCHEMA_PATH} and ${CONFIG_REFERENCE_PATH}`);
}
