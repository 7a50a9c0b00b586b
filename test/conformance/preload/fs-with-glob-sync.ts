/**
 * `node:fs` plus the `globSync` that Node 22 added, for the conformance bundle on Node 20 (it imports `fs` by
 * named imports only, and uses `globSync` only to find `**\/checks.json` result files). Supports `*`, `?` and
 * `**` relative to `cwd`.
 */
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export * from 'node:fs';

function patternToRegExp(pattern: string): RegExp {
  let source = '';
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern.charAt(index);
    if (pattern.startsWith('**/', index)) {
      source += '(?:.*/)?';
      index += 2;
    } else if (pattern.startsWith('**', index)) {
      source += '.*';
      index += 1;
    } else if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

export function globSync(pattern: string | readonly string[], options: { readonly cwd?: string } = {}): string[] {
  const cwd = options.cwd ?? process.cwd();
  const patterns = (typeof pattern === 'string' ? [pattern] : pattern).map(patternToRegExp);
  const paths = readdirSync(cwd, { recursive: true, encoding: 'utf8' }).map((path) => relative(cwd, join(cwd, path)));
  return paths.filter((path) => patterns.some((regexp) => regexp.test(path.split(sep).join('/'))));
}
