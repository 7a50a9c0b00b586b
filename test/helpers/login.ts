import { runLoginCommand } from '../../src/client/login-command.js';
import { followSignIn, type CliRun } from './cli.js';

/** `login <args> --no-browser` in this process (`runLoginCommand`, what main.ts calls), the user played as in `runCli`. */
export async function runLogin(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  let [stdout, stderr] = ['', ''];
  const visits: Promise<unknown>[] = [];
  const output = {
    stdout: (text: string) => void (stdout += text),
    stderr: (text: string) => {
      stderr += text;
      for (const line of text.split('\n')) followSignIn(line, visits, (error) => (stderr += `(browser: ${String(error)})\n`));
    },
  };
  const code = await runLoginCommand([...args, '--no-browser', '--timeout', '5s'], output, env);
  await Promise.all(visits);
  return { code, stdout, stderr };
}
