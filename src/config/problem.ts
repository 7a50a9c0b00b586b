/** One reason a configuration is rejected. */
export interface ConfigProblem {
  /** Dotted path of the offending key (`routes.0.tokens.jwt.issuer`); empty for file-level problems. */
  readonly path: string;
  readonly message: string;
}

/** A file-system error's code (`ENOENT`), the only part of it worth showing: messages repeat inputs. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'unreadable';
}

export function formatPath(segments: readonly PropertyKey[]): string {
  return segments.map(String).join('.');
}
