import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { freePort } from '../../helpers/net.js';
import { clientEnvironment, packageFile, packageVersion, type ClientDriver, type MatrixContext } from '../context.js';
import { start } from '../processes.js';
import { otherRouteKinds } from './route-kinds.js';

/** Installed under an npm alias next to 2.x (package.json: "inspector-v1": "npm:@modelcontextprotocol/inspector@1.0.x"). */
const PACKAGE = 'inspector-v1';
const STEP_TIMEOUT_MS = 20_000;

/** Runs the tool listed as `title`; whether its result shows `expected`. */
async function runTool(page: Page, title: string, args: Readonly<Record<string, string>>, expected: string): Promise<boolean> {
  await page.getByText(title, { exact: true }).first().click();
  for (const [name, value] of Object.entries(args)) await page.locator(`#${name}`).fill(value);
  await page.getByRole('button', { name: 'Run Tool' }).click();
  await page.getByText(/^Tool Result: (Success|Error)$/).waitFor({ timeout: STEP_TIMEOUT_MS });
  return (await page.getByText(`"${expected}"`, { exact: true }).count()) > 0;
}

/** Streamable HTTP, Direct, `url`, Connect: the 401 sends the page through the authorization server and back. */
async function connectDirect(page: Page, url: URL): Promise<void> {
  await page.getByRole('combobox').first().click();
  await page.getByRole('option', { name: 'Streamable HTTP' }).click();
  await page.locator('#sse-url-input').fill(url.href);
  await page.getByRole('combobox').nth(1).click();
  await page.getByRole('option', { name: 'Direct' }).click();
  await page.getByRole('button', { name: 'Connect' }).click();
}

/**
 * MCP Inspector 1.0.x's web UI in "Direct" connection mode: the page itself does everything — the MCP requests,
 * protected resource metadata, authorization server metadata, registration and the token request — so every
 * one of them needs CORS from the gateway and the authorization server. Only the static UI server runs (no
 * Inspector proxy: Direct mode does not use it).
 */
function inspectorV1Direct(client: string, route: (context: MatrixContext) => URL): ClientDriver {
  return {
    client,
    version: (context) => `${packageVersion(PACKAGE)} (${context.chromium})`,
    timeoutMs: 150_000,
    async run(context) {
      const directory = join(context.runDir, client.replace(/\W+/g, '-'));
      await mkdir(directory, { recursive: true });
      const port = await freePort();
      const env = await clientEnvironment(directory, { HOST: '127.0.0.1', CLIENT_PORT: String(port), MCP_AUTO_OPEN_ENABLED: 'false' });
      const ui = start(process.execPath, [packageFile(PACKAGE, 'client', 'bin', 'client.js')], {
        env,
        cwd: directory,
        logFile: join(directory, 'inspector-v1.log'),
      });
      try {
        await ui.waitFor(/is up and running/);
        const page = await context.newPage();
        // Direct mode: the page asks its proxy (6277) for defaults once and goes on without it.
        await page.goto(`http://127.0.0.1:${port}/`);
        await connectDirect(page, route(context));
        await page.getByRole('tab', { name: 'Tools' }).click({ timeout: STEP_TIMEOUT_MS });
        await page.getByRole('button', { name: 'List Tools' }).click();
        const added = await runTool(page, 'Add', { a: '2', b: '3' }, '5');
        const multiplied = await runTool(page, 'Multiply', { x: '6', y: '7' }, '42');
        const error = multiplied ? undefined : await page.getByText(/^"Streamable HTTP error: .*"$/).first().textContent();
        const notes = error === undefined || error === null ? [] : [`multiply answered ${error}`];
        if (route(context) !== context.calcUrl) return { results: { added, multiplied }, notes };
        const routes = await otherRouteKinds(context, async (url, tool, args) => {
          const other = await context.newPage();
          await other.goto(`http://127.0.0.1:${port}/`);
          await connectDirect(other, url);
          const tools = other.getByRole('tab', { name: 'Tools' });
          const refused = other.getByText(/^Connection Error/);
          const shown = await Promise.race([
            tools.waitFor({ timeout: STEP_TIMEOUT_MS }).then(() => 'connected' as const),
            refused.waitFor({ timeout: STEP_TIMEOUT_MS }).then(() => 'refused' as const),
          ]);
          // What the person reads on the page: Inspector 1.0 shows its own line, not the server's error text.
          if (shown === 'refused') throw new Error((await refused.first().textContent()) ?? 'Connection Error');
          await tools.click();
          await other.getByRole('button', { name: 'List Tools' }).click();
          const expected = tool === 'add' ? '5' : tool === 'multiply' ? '42' : '(no notes)';
          const title = tool === 'add' ? 'Add' : tool === 'multiply' ? 'Multiply' : 'List notes';
          const ok = await runTool(other, title, Object.fromEntries(Object.entries(args).map(([name, value]) => [name, String(value)])), expected);
          return ok ? expected : 'another result';
        });
        if (routes['user-grant']?.verdict === 'fail') {
          notes.push("per-user grant: Inspector 1.0 replaces the server's error text with its own line, so the consent link never reaches the person (the route is listed with a Connect button on /consent/grants)");
        }
        return { results: { added, multiplied }, notes, routes };
      } finally {
        await ui.stop();
      }
    },
  };
}

export const inspectorV1 = inspectorV1Direct('MCP Inspector 1.0 web UI, Direct (in-browser OAuth)', (context) => context.calcUrl);
export const inspectorV1Upfront: ClientDriver = {
  ...inspectorV1Direct('MCP Inspector 1.0 web UI, Direct, upfront_scopes route', (context) => context.upfrontUrl),
  mainRoute: 'upfront',
};
