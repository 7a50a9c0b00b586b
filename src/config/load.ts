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
  if (!parsed.success) return fail([...refs.problems, ...notAtRefs(zodProblems(parsed.error.issues))]);
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
