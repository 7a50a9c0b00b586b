import { loadConfigFile, type ConfigProblem } from './load.js';
import type { CompiledConfig } from './types.js';

function printProblems(file: string, problems: readonly ConfigProblem[], warnings: readonly string[]): void {
  process.stderr.write(`${file}: ${problems.length} problem(s)${warnings.length === 0 ? '' : `, ${warnings.length} warning(s)`}\n`);
  for (const problem of problems) {
    process.stderr.write(`  ${problem.path === '' ? '(file)' : problem.path}: ${problem.message}\n`);
  }
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
}

/** The config file every command that needs one reads: every problem with its YAML path on stderr, then exit 1. */
export async function loadConfigOrExit(file: string): Promise<CompiledConfig> {
  const result = await loadConfigFile(file);
  if (!result.ok) {
    printProblems(file, result.problems, result.warnings ?? []);
    process.exit(1);
  }
  return result.config;
}

/** `check-config FILE`: exit 0 when valid (warnings on stderr), 1 listing every problem, 2 without a FILE. */
export async function checkConfigCommand(file: string | undefined): Promise<number> {
  if (!file) {
    process.stderr.write('check-config needs a FILE argument\n');
    return 2;
  }
  const config = await loadConfigOrExit(file);
  for (const warning of config.warnings) process.stderr.write(`warning: ${warning}\n`);
  process.stdout.write(`${file}: OK (${config.routes.length} route(s): ${config.routes.map((route) => route.path).join(', ')})\n`);
  return 0;
}
