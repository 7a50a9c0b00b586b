import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { freePort } from '../../helpers/net.js';
import { clientEnvironment, packageBin, packageVersion, type ClientDriver } from '../context.js';
import { start } from '../processes.js';
import { otherRouteKinds } from './route-kinds.js';

const PACKAGE = '@modelcontextprotocol/inspector';
const STEP_TIMEOUT_MS = 20_000;

/** Waits until the tool result panel shows `value`. */
async function resultShows(page: Page, value: string): Promise<boolean> {
  return page
    // Evaluated in the page (a string: this project's TypeScript has no DOM types).
    .waitForFunction(`/Results\\s+${value}\\b/.test(document.body.innerText)`, undefined, { timeout: STEP_TIMEOUT_MS })
    .then(
      () => true,
      () => false,
    );
}

/** Add Servers → Add manually → streamable-http → `url`, then its connect switch. */
async function addAndConnect(page: Page, id: string, url: URL): Promise<void> {
  await page.getByRole('button', { name: 'Add Servers' }).click();
  await page.getByRole('menuitem', { name: /Add manually/ }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Server ID').fill(id);
  await dialog.getByLabel('Transport').click();
  await page.getByRole('option', { name: 'streamable-http' }).click();
  await dialog.getByLabel('URL').fill(url.href);
  await dialog.getByRole('button', { name: 'Add' }).click();
  await dialog.waitFor({ state: 'hidden' });
  // Connecting runs into the 401: the page goes through the authorization server and comes back connected.
  await page.getByRole('switch', { name: `Connect or disconnect "${id}"` }).click({ force: true });
}

async function execute(page: Page, tool: string, args: Readonly<Record<string, string>>): Promise<void> {
  // The tool's button reads "<title> <name>".
  await page.getByRole('button', { name: new RegExp(`\\s${tool}$`) }).click();
  for (const [name, value] of Object.entries(args)) await page.getByRole('textbox', { name, exact: true }).fill(value);
  await page.getByRole('button', { name: 'Execute Tool' }).click();
}

/**
 * MCP Inspector's web UI (2.x) in Chromium, as the README tells a user: Add Servers → Add manually →
 * streamable-http → the gateway URL, then connect. Its backend runs discovery, registration and the token
 * request; the page is sent through the authorization server and back. On `multiply` it offers the step-up
 * (Authorize), and the call is retried after it. Then the other route kinds, each server added in a page of its own.
 */
export const inspectorWeb: ClientDriver = {
  client: 'MCP Inspector web UI (backend OAuth)',
  version: (context) => `${packageVersion(PACKAGE)} (${context.chromium})`,
  timeoutMs: 90_000,
  async run(context) {
    const directory = join(context.runDir, 'inspector-web');
    await mkdir(directory, { recursive: true });
    const [port, sandboxPort] = [await freePort(), await freePort()];
    const token = randomBytes(16).toString('hex');
    const env = await clientEnvironment(directory, {
      CLIENT_PORT: String(port),
      MCP_SANDBOX_PORT: String(sandboxPort),
      MCP_APP_ORIGIN_PORT: '0',
      MCP_INSPECTOR_API_TOKEN: token,
      MCP_AUTO_OPEN_ENABLED: 'false',
      MCP_INSPECTOR_SECRET_STORE: 'memory',
    });
    const server = start(process.execPath, [packageBin(PACKAGE, 'inspector'), '--web'], {
      env,
      cwd: directory,
      logFile: join(directory, 'inspector-web.log'),
    });
    try {
      await server.waitFor(/is up and running at/);
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${port}/?MCP_INSPECTOR_API_TOKEN=${token}`);
      await addAndConnect(page, 'gateway-calc', context.calcUrl);
      await page.getByText('Tools', { exact: true }).first().click({ timeout: STEP_TIMEOUT_MS });

      await execute(page, 'add', { a: '2', b: '3' });
      const calcAdded = await resultShows(page, '5');

      await execute(page, 'multiply', { x: '6', y: '7' });
      const stepUp = page.getByRole('button', { name: 'Authorize' });
      const askedToStepUp = await stepUp.waitFor({ timeout: STEP_TIMEOUT_MS }).then(
        () => true,
        () => false,
      );
      if (askedToStepUp) {
        await stepUp.click();
        await page.getByText('Step-up authorization succeeded').waitFor({ timeout: STEP_TIMEOUT_MS });
        await execute(page, 'multiply', { x: '6', y: '7' });
      }
      const multiplied = await resultShows(page, '42');
      const added = new Set<string>();
      // A server is added once; the second attempt on the per-user grant route connects the same entry again.
      const open = async (id: string, url: URL) => {
        const other = await context.newPage();
        await other.goto(`http://127.0.0.1:${port}/?MCP_INSPECTOR_API_TOKEN=${token}`);
        if (added.has(id)) await other.getByRole('switch', { name: `Connect or disconnect "${id}"` }).click({ force: true });
        else await addAndConnect(other, id, url);
        added.add(id);
        return other;
      };
      const routes = await otherRouteKinds(context, async (url, tool, args, session) => {
        const other = await open(`gateway-${session}`, url);
        const tools = other.getByText('Tools', { exact: true }).first();
        const shown = await Promise.race([
          tools.waitFor({ timeout: STEP_TIMEOUT_MS }).then(() => 'connected' as const),
          other.getByText('Re-authentication required').waitFor({ timeout: STEP_TIMEOUT_MS }).then(() => 'refused' as const),
        ]);
        // What the person reads on the page: the banner, with the gateway's text.
        if (shown === 'refused') throw new Error(String(await other.evaluate('document.body.innerText')));
        await tools.click();
        await execute(other, tool, Object.fromEntries(Object.entries(args).map(([name, value]) => [name, String(value)])));
        await other.waitForFunction('/Results\\s+\\S/.test(document.body.innerText)', undefined, { timeout: STEP_TIMEOUT_MS });
        const text = String(await other.evaluate('document.body.innerText'));
        return /Results\s+(.+)/.exec(text)?.[1]?.trim() ?? '';
      }, "link in its 'Re-authentication required' banner (the link, not its Re-authenticate button)");
      return { results: { added: calcAdded, multiplied }, routes };
    } finally {
      await server.stop();
    }
  },
};
