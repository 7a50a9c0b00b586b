import { readFile } from 'node:fs/promises';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseDuration } from '../config/duration.js';

/** Where a command writes: process.stdout/stderr in the CLI, buffers in tests. */
export interface CommandOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** 0 success, 1 the command's own failure (a failed check, a refused login), 2 usage error or unreachable URL. */
export type ExitCode = 0 | 1 | 2;

/** A problem with the command line itself: reported with the usage line, exit code 2. */
export class UsageError extends Error {}

/** Runs a command; a `UsageError` prints its message and the usage line and exits 2, anything else propagates. */
export async function withUsageErrors(output: CommandOutput, usage: string, run: () => Promise<ExitCode>): Promise<ExitCode> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    output.stderr(`${error.message}\nUsage: ${usage}\n`);
    return 2;
  }
}

/** A command's arguments after its name; an unknown option or a missing value is a `UsageError`. */
export function parseCommandLine<const Options extends NonNullable<ParseArgsConfig['options']>>(args: readonly string[], options: Options) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** `--timeout`: a duration with a unit (`10s`, `500ms`, `2m`) or a plain number of seconds. */
export function parseTimeout(value: string | undefined, defaultMs: number): number {
  if (value === undefined) return defaultMs;
  const ms = /^\d+(\.\d+)?$/.test(value) ? parseDuration(Number(value)) : parseDuration(value);
  if (ms === undefined || ms <= 0) throw new UsageError(`--timeout ${value} is not a duration (10s, 500ms, 2m)`);
  return ms;
}

export function parseHttpUrl(value: string | undefined, what: string): URL {
  if (value === undefined) throw new UsageError(`${what} is missing`);
  if (!URL.canParse(value)) throw new UsageError(`${what} ${value} is not an absolute URL`);
  const url = new URL(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`${what} must be an http or https URL`);
  return url;
}

/** A secret from a file, without the trailing newline an editor or `echo` adds; the value is never echoed. */
export async function readSecretFile(file: string, option: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).replace(/\r?\n$/, '');
  } catch (error) {
    throw new UsageError(`cannot read ${option} ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}
