/** Shared by the editor schema (schema/config.schema.json) and the Helm chart's values.schema.json. */

export type JsonSchema = { [key: string]: unknown };

/** Any string holding a `${...}` reference: the loader resolves it before validation, so constraints wait. */
const REFERENCE_STRING: JsonSchema = { type: 'string', pattern: '\\$\\{[^}]*\\}' };
const STRING_CONSTRAINTS = ['pattern', 'minLength', 'maxLength', 'format'] as const;
const ANNOTATIONS = ['description', 'default', 'title'] as const;

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Constrained string schemas also accept a reference (e.g. key_secret: ${env:CACHE_KEY_SECRET}). */
export function allowReferences(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(allowReferences);
  if (!isObject(node)) return node;
  const walked = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, allowReferences(value)]));
  if (walked.type !== 'string' || !STRING_CONSTRAINTS.some((key) => key in walked)) return walked;
  const annotations = Object.fromEntries(ANNOTATIONS.filter((key) => key in walked).map((key) => [key, walked[key]]));
  const constraints = Object.fromEntries(
    Object.entries(walked).filter(([key]) => !(ANNOTATIONS as readonly string[]).includes(key)),
  );
  return { ...annotations, anyOf: [REFERENCE_STRING, constraints] };
}

