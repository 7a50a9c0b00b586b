import { runLoginCommand, type LoginCommandOptions } from '../../src/client/login-command.js';
import { followSignIn, type CliRun } from './cli.js';

/** `login` in this process (`runLoginCommand`, what main.ts calls), the user played as in `runCli`. */
export async function runLogin(options: LoginCommandOptions, env: NodeJS.ProcessEnv): Promise<CliRun> {
  let [stdout, stderr] = ['', ''];
  const visits: Promise<unknown>[] = [];
  const output = {
    stdout: (text: string) => void (stdout += text),
    stderr: (text: string) => {
      stderr += text;
      for (const line of text.split('\n')) followSignIn(line, visits, (error) => (stderr += `(browser: ${String(error)})\n`));
    },
  };
  const code = await runLoginCommand({ noBrowser: true, timeout: '5s', ...options }, output, env);
  await Promise.all(visits);
  return { code, stdout, stderr };
}
