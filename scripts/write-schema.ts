import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { configSchema } from '../src/config/schema.js';

/** Where the JSON Schema for editors and the Helm chart lives; a test fails when it is stale. */
export const CONFIG_JSON_SCHEMA_PATH = fileURLToPath(new URL('../schema/config.schema.json', import.meta.url));

/** The JSON Schema of the config file as written by operators (input side: defaults are optional). */
export function renderConfigJsonSchema(): string {
  return `${JSON.stringify(z.toJSONSchema(configSchema, { io: 'input', target: 'draft-2020-12' }), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(CONFIG_JSON_SCHEMA_PATH, renderConfigJsonSchema());
  console.log(`wrote ${CONFIG_JSON_SCHEMA_PATH}`);
}
