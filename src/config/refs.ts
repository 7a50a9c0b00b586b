import { isAbsolute } from 'node:path';
import type { ConfigProblem } from './problem.js';
import { errorCode, formatPath } from './problem.js';

/**
 * `${env:NAME}` and `${file:/absolute/path}` references inside any string value of the parsed YAML, resolved
 * before validation. Resolved text is not scanned again, and messages name the reference, never its value.
 */

export interface RefSources {
  readonly env: NodeJS.ProcessEnv;
  readonly readFile: (path: string) => string;
}

export interface ResolvedRefs {
  readonly value: unknown;
  /** Dotted paths of the strings that contained at least one reference. */
  readonly referencedPaths: ReadonlySet<string>;
  readonly problems: readonly ConfigProblem[];
}

const REFERENCE = /\$\{([^}]*)\}/g;
const ENV_REFERENCE = /^env:([A-Za-z_][A-Za-z0-9_]*)$/;
const FILE_REFERENCE = /^file:(.+)$/;

export function resolveRefs(tree: unknown, sources: RefSources): ResolvedRefs {
  const referencedPaths = new Set<string>();
  const problems: ConfigProblem[] = [];

  const resolveString = (text: string, path: string): string =>
    text.replace(REFERENCE, (_match, reference: string) => {
      referencedPaths.add(path);
      const { value, problem } = resolveOne(reference, sources);
      if (problem !== undefined) problems.push({ path, message: problem });
      return value;
    });

  const walk = (node: unknown, segments: readonly PropertyKey[]): unknown => {
    if (typeof node === 'string') return resolveString(node, formatPath(segments));
    if (Array.isArray(node)) return node.map((item, index) => walk(item, [...segments, index]));
    if (typeof node === 'object' && node !== null) {
      return Object.fromEntries(Object.entries(node).map(([key, item]) => [key, walk(item, [...segments, key])]));
    }
    return node;
  };

  return { value: walk(tree, []), referencedPaths, problems };
}

function resolveOne(reference: string, sources: RefSources): { value: string; problem?: string } {
  const env = ENV_REFERENCE.exec(reference);
  if (env) {
    const name = env[1] ?? '';
    const value = sources.env[name];
    return value === undefined ? { value: '', problem: `environment variable ${name} is not set` } : { value };
  }
  const file = FILE_REFERENCE.exec(reference);
  if (file) {
    const path = file[1] ?? '';
    if (!isAbsolute(path)) return { value: '', problem: `file reference ${path} must be an absolute path` };
    try {
      // Secret files usually end with a newline that is not part of the secret.
      return { value: sources.readFile(path).replace(/\r?\n$/, '') };
    } catch (error) {
      return { value: '', problem: `cannot read file ${path} (${errorCode(error)})` };
    }
  }
  return { value: '', problem: 'unsupported reference; write ${env:NAME} or ${file:/absolute/path}' };
}
