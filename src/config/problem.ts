/** One reason a configuration is rejected. */
export interface ConfigProblem {
  /** Dotted path of the offending key (`routes.0.tokens.jwt.issuer`); empty for file-level problems. */
  readonly path: string;
  readonly message: string;
}

/** What a compile step found besides settings: problems reject the file, warnings are printed by check-config. */
export interface Findings {
  readonly problems: readonly ConfigProblem[];
  readonly warnings: readonly string[];
}

/** A section compiled: its settings, and what it found. */
export interface Compiled<T> extends Findings {
  readonly settings: T;
}

/** A string value with the dotted path it was written at; `undefined` when the key is absent. */
export type ValueAt = readonly [path: string, value: string | undefined];

/** A file-system error's code (`ENOENT`), the only part of it worth showing: messages repeat inputs. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unreadable';
}

export function formatPath(segments: readonly PropertyKey[]): string {
  return segments.map(String).join('.');
}
