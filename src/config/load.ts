import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import type { YAMLError } from 'yaml';
import type { z } from 'zod';
import { compileConfig } from './compile.js';
import type { ConfigProblem } from './problem.js';
import { errorCode, formatPath } from './problem.js';
import { resolveRefs } from './refs.js';
import { configSchema } from './schema.js';
import type { CompiledConfig } from './types.js';

export type { ConfigProblem } from './problem.js';

/** A failed result carries the warnings found too, when the file got far enough to have them checked. */
export type ConfigResult = { ok: true; config: CompiledConfig } | { ok: false; problems: ConfigProblem[]; warnings?: readonly string[] };

export interface ParseOptions {
  /** Source of `${env:NAME}` references. Default: `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Reader for `${file:/path}` references. Default: `fs.readFileSync(path, 'utf8')`. */
  readonly readFile?: (path: string) => string;
  /** File name used in YAML syntax messages. */
  readonly source?: string;
}

/**
 * YAML text → compiled config, or every problem found: YAML syntax, secret references, schema, then the
 * cross-key checks (which need a schema-valid document to run).
 */
export function parseConfig(text: string, options: ParseOptions = {}): ConfigResult {
  const document = parseDocument(text);
  if (document.errors.length > 0) return fail(document.errors.map((error) => yamlProblem(error, options.source)));
  let tree: unknown;
  try {
    tree = document.toJS();
  } catch (error) {
    // Unresolved aliases and alias bombs surface here.
    const reason = firstLine(error instanceof Error ? error.message : String(error));
    return fail([{ path: '', message: `YAML error: ${reason}` }]);
  }

  if (tree === null || tree === undefined) return fail([{ path: '', message: 'the configuration is empty' }]);

  const refs = resolveRefs(tree, {
    env: options.env ?? process.env,
    readFile: options.readFile ?? ((path) => readFileSync(path, 'utf8')),
  });
  // A failed reference leaves its value empty: the schema's complaints about that value would only mislead.
  const refPaths = new Set(refs.problems.map((problem) => problem.path));
  const notAtRefs = (problems: ConfigProblem[]) => problems.filter((problem) => !refPaths.has(problem.path));

  const parsed = configSchema.safeParse(refs.value, { error: requiredMessage });
  if (!parsed.success) {
    const schemaProblems = zodProblems(parsed.error.issues);
    const semantic = checksBesideSchemaProblems(refs.value, parsed.error.issues, refs.referencedPaths);
    const known = new Set(schemaProblems.map((problem) => problem.path));
    const more = semantic.problems.filter((problem) => !known.has(problem.path));
    return fail([...refs.problems, ...notAtRefs([...schemaProblems, ...more])], semantic.warnings);
  }
  const compiled = compileConfig(parsed.data, refs.referencedPaths);
  if ('problems' in compiled) return fail([...refs.problems, ...notAtRefs(compiled.problems)], compiled.warnings);
  if (refs.problems.length > 0) return fail([...refs.problems], compiled.config.warnings);
  return { ok: true, config: compiled.config };
}

export async function loadConfigFile(
  path: string,
  options: Pick<ParseOptions, 'env' | 'readFile'> = {},
): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return fail([{ path: '', message: `cannot read config file ${path} (${errorCode(error)})` }]);
  }
  return parseConfig(text, { ...options, source: path });
}

const ROUTE_INDEX = /routes\.(\d+)/g;

/**
 * The cross-key checks, in the same pass as the schema problems, where they can run: when every schema problem is
 * inside `routes[i]`, the other routes still form a valid document; its problems are reported with their indexes
 * in the file. Anything else (a broken top-level section) leaves them for the next run.
 */
function checksBesideSchemaProblems(
  tree: unknown,
  issues: readonly z.core.$ZodIssue[],
  referencedPaths: ReadonlySet<string>,
): { problems: ConfigProblem[]; warnings: readonly string[] } {
  const none = { problems: [], warnings: [] };
  const broken = new Set<number>();
  for (const issue of issues) {
    const [section, index] = issue.path;
    if (section !== 'routes' || typeof index !== 'number') return none;
    broken.add(index);
  }
  if (typeof tree !== 'object' || tree === null || !Array.isArray((tree as { routes?: unknown }).routes)) return none;
  const routes = (tree as { routes: unknown[] }).routes;
  const kept = routes.map((_route, index) => index).filter((index) => !broken.has(index));
  const rest = configSchema.safeParse({ ...tree, routes: kept.map((index) => routes[index]) }, { error: requiredMessage });
  if (!rest.success) return none;
  // Secret references move with their routes into the shortened list, and back out with the results.
  const position = new Map(kept.map((index, at) => [index, at]));
  const shortened = [...referencedPaths].flatMap((path) => {
    const match = /^routes\.(\d+)(\..*)?$/.exec(path);
    if (!match) return [path];
    const at = position.get(Number(match[1]));
    return at === undefined ? [] : [`routes.${at}${match[2] ?? ''}`];
  });
  const compiled = compileConfig(rest.data, new Set(shortened));
  const inFile = (text: string) => text.replace(ROUTE_INDEX, (_match, index: string) => `routes.${kept[Number(index)] ?? index}`);
  const problems = 'problems' in compiled ? compiled.problems.map((problem) => ({ path: inFile(problem.path), message: inFile(problem.message) })) : [];
  const warnings = ('problems' in compiled ? compiled.warnings : compiled.config.warnings).map(inFile);
  return { problems, warnings };
}

function fail(problems: ConfigProblem[], warnings: readonly string[] = []): ConfigResult {
  return warnings.length === 0 ? { ok: false, problems } : { ok: false, problems, warnings };
}

/** Missing required keys read better as "is required" than as a type mismatch against `undefined`. */
function requiredMessage(issue: z.core.$ZodRawIssue): string | undefined {
  return issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : undefined;
}

function zodProblems(issues: readonly z.core.$ZodIssue[]): ConfigProblem[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), message: 'unknown key' }))
      : [{ path: formatPath(issue.path), message: issue.message }],
  );
}

/**
 * Position and reason only: yaml's own message quotes the offending source, which may be a literal secret.
 */
function yamlProblem(error: YAMLError, source: string | undefined): ConfigProblem {
  const position = error.linePos?.[0];
  const where = position ? ` at line ${position.line}, column ${position.col}` : '';
  const reason = firstLine(error.message)
    .replace(/ at line \d+, column \d+:?$/, '')
    .replace(/: ".*"$/, '');
  return { path: '', message: `YAML syntax error${source === undefined ? '' : ` in ${source}`}${where}: ${reason}` };
}

function firstLine(message: string): string {
  return message.split('\n', 1)[0] ?? '';
}
