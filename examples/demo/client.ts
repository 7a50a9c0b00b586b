/**
 * `npm run demo:client`: the official MCP SDK client through the whole authorization flow against the running
 * demo (`npm run demo`), headless, printing each step and the results of add and multiply; then the user_oauth
 * route: URL elicitation, consent, and the first notes calls. Exits non-zero on any failure.
 *
 *   --url URL                    MCP endpoint (default http://127.0.0.1:8080/calc/mcp; try .../calc-opaque/mcp)
 *   --notes-url URL              the user_oauth route (default: /notes/mcp on the --url origin); --no-notes skips it
 *   --client-metadata-document   identify with a Client ID Metadata Document on loopback instead of registering
 */
import { parseArgs } from 'node:util';
import { runDemoClient } from './demo-client.js';
import { runNotesDemo } from './notes-demo.js';

const DEFAULT_URL = 'http://127.0.0.1:8080/calc/mcp';

function fail(message: string): never {
  process.stderr.write(`demo client failed: ${message}\n`);
  process.exit(1);
}

function connectionHint(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? cause.code : undefined;
  return code === 'ECONNREFUSED' ? ' (is `npm run demo` running?)' : '';
}

let options: { url: URL; notesUrl: URL | undefined; clientMetadataDocument: boolean };
try {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: DEFAULT_URL },
      'notes-url': { type: 'string' },
      'no-notes': { type: 'boolean', default: false },
      'client-metadata-document': { type: 'boolean', default: false },
    },
    strict: true,
  });
  const url = new URL(values.url);
  const notesUrl = values['no-notes'] ? undefined : new URL(values['notes-url'] ?? `${url.origin}/notes/mcp`);
  options = { url, notesUrl, clientMetadataDocument: values['client-metadata-document'] };
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

const print = (line: string) => process.stdout.write(`${line}\n`);
process.stdout.write(`mcp-auth-gateway demo client → ${options.url.href}\n`);
try {
  await runDemoClient({ ...options, print });
  if (options.notesUrl) {
    print(`\nuser_oauth: the notes server behind the gateway → ${options.notesUrl.href}`);
    await runNotesDemo(options.notesUrl, print);
  }
  process.stdout.write('done: the whole flow ran through the gateway\n');
} catch (error) {
  fail(`${error instanceof Error ? error.message : String(error)}${connectionHint(error)}`);
}
