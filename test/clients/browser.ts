import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`): the run never downloads a browser. */
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface Pages {
  /** A new browser context and page that can reach loopback hosts only (web fonts and the like are refused). */
  newPage(): Promise<Page>;
  /** Closes every page opened so far. */
  closePages(): Promise<void>;
  close(): Promise<void>;
  readonly version: string;
}

export async function launchChromium(): Promise<Pages> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install chromium (tests drive Debian's, never a downloaded one)`);
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  const contexts = new Set<BrowserContext>();
  return {
    version: browser.version(),
    async newPage() {
      const context = await browser.newContext();
      contexts.add(context);
      await context.route((url) => !LOOPBACK.has(url.hostname), (route) => route.abort());
      return context.newPage();
    },
    async closePages() {
      await Promise.all([...contexts].map((context) => context.close()));
      contexts.clear();
    },
    close: () => browser.close(),
  };
}
