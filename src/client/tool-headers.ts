import { encodeMcpHeaderValue } from '../policy/mcp-headers.js';

/**
 * `x-mcp-header` in a tool's inputSchema (MCP 2026-07-28 transports, "Custom Headers from Tool Parameters"): a
 * client mirrors the annotated arguments into `Mcp-Param-{name}` headers, and drops from `tools/list` any tool whose
 * annotations break the rules, so one malformed tool never stops the others.
 */

type Schema = Record<string, unknown>;

/** One annotated parameter: its header name and where its value sits in the arguments. */
interface Annotation {
  readonly header: string;
  readonly path: readonly string[];
}

const ANNOTATION = 'x-mcp-header';
/** RFC 9110 §5.1 field-name: 1*tchar. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES: ReadonlySet<unknown> = new Set(['string', 'integer', 'boolean']);

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Every annotation in `schema`, or why the tool is invalid: an annotation that is not a token, sits on a type other
 * than string, integer or boolean, is not reachable from the root through `properties` alone (items, composition,
 * conditionals, `$ref`), or repeats another case-insensitively.
 */
function annotationsOf(schema: unknown): Annotation[] | string {
  const found: Annotation[] = [];
  const problems: string[] = [];
  const walk = (node: unknown, path: readonly string[] | undefined): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, undefined);
      return;
    }
    if (!isSchema(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === ANNOTATION) {
        if (path === undefined) problems.push('x-mcp-header is not reachable through properties alone');
        else if (path.length === 0) problems.push('x-mcp-header is not on a parameter');
        else if (typeof value !== 'string' || !TOKEN.test(value)) problems.push('x-mcp-header is not an HTTP field-name token');
        else if (!HEADER_TYPES.has(node.type)) problems.push(`x-mcp-header "${value}" is on a parameter that is not a string, integer or boolean`);
        else found.push({ header: value, path });
      } else if (key === 'properties' && path !== undefined && isSchema(value)) {
        for (const [name, property] of Object.entries(value)) walk(property, [...path, name]);
      } else {
        walk(value, undefined);
      }
    }
  };
  walk(schema, []);
  const names = found.map((annotation) => annotation.header.toLowerCase());
  if (new Set(names).size !== names.length) problems.push('two x-mcp-header values are the same');
  return problems[0] ?? found;
}

/** Why a tool definition must be dropped from `tools/list`, or undefined when it is usable. */
export function toolHeaderProblem(inputSchema: unknown): string | undefined {
  const annotations = annotationsOf(inputSchema);
  return typeof annotations === 'string' ? annotations : undefined;
}

function valueAt(args: unknown, path: readonly string[]): unknown {
  let value = args;
  for (const name of path) value = isSchema(value) && Object.hasOwn(value, name) ? value[name] : undefined;
  return value;
}

/** The `Mcp-Param-*` headers of a call: one per annotated argument that has a value (null and absent: none). */
export function toolParamHeaders(inputSchema: unknown, args: Record<string, unknown>): Record<string, string> {
  const annotations = annotationsOf(inputSchema);
  if (typeof annotations === 'string') return {};
  const headers: Record<string, string> = {};
  for (const { header, path } of annotations) {
    const value = valueAt(args, path);
    if (typeof value === 'string') headers[`Mcp-Param-${header}`] = encodeMcpHeaderValue(value);
    else if (typeof value === 'boolean' || (typeof value === 'number' && Number.isSafeInteger(value))) headers[`Mcp-Param-${header}`] = String(value);
  }
  return headers;
}
