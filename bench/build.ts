import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ENTRY = 'dist/main.js';

function newestMtimeMs(directory: string): number {
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The bench measures what production runs, `node dist/main.js`: under tsx every closure the hot path creates goes
 * through esbuild's `__name` helper, which the compiled code does not pay. Builds dist/ when it is older than src/.
 */
export function ensureBuilt(log: (line: string) => void): string {
  const built = statSync(ENTRY, { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined || built < newestMtimeMs('src')) {
    log('building dist/ (tsc -p tsconfig.build.json) ...');
    execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  }
  return ENTRY;
}
