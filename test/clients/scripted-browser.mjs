#!/usr/bin/env node
// The "browser" that command-line MCP clients open (through BROWSER or an xdg-open on PATH) during the matrix run:
// it follows the authorization request's redirects with its own cookie jar, as a user agent would with a
// development authorization server that approves without a page, and finally loads the client's redirect URI,
// which hands the code to the client. Loopback hosts only, bounded in hops and time. Logs no query (codes).
/* global fetch, AbortSignal, setTimeout */
import { appendFileSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

const MAX_HOPS = 12;
const HOP_TIMEOUT_MS = 10_000;
const RELOADS = 20;
const RELOAD_DELAY_MS = 250;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

const log = (line) => {
  if (process.env.SCRIPTED_BROWSER_LOG) appendFileSync(process.env.SCRIPTED_BROWSER_LOG, `${line}\n`);
};

const cookies = new Map();
function remember(response) {
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';', 1)[0] ?? '';
    const eq = pair.indexOf('=');
    if (eq > 0) cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
  }
}

/**
 * A fetch that, like a user reloading, tries again while nothing listens yet: mcp-remote opens the browser for a
 * step-up before its callback server listens, which a person never notices and this browser, being fast, does.
 */
async function load(url, init) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (error?.cause?.code !== 'ECONNREFUSED' || attempt === RELOADS) throw error;
      log(`connection refused, reloading ${url.origin}${url.pathname}`);
      await new Promise((resolve) => setTimeout(resolve, RELOAD_DELAY_MS));
    }
  }
}

async function browse(start) {
  let url = new URL(start);
  for (let hop = 0; hop < MAX_HOPS; hop += 1) {
    if (!LOOPBACK.has(url.hostname)) throw new Error(`refusing to leave loopback: ${url.origin}`);
    const cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await load(url, { redirect: 'manual', headers: { cookie }, signal: AbortSignal.timeout(HOP_TIMEOUT_MS) });
    remember(response);
    await response.arrayBuffer();
    const location = response.headers.get('location');
    log(`${response.status} ${url.origin}${url.pathname}`);
    if (response.status < 300 || response.status >= 400 || location === null) return;
    url = new URL(location, url);
  }
  throw new Error(`no end after ${MAX_HOPS} redirects`);
}

const target = process.argv[2];
if (target === undefined) {
  process.stderr.write('usage: scripted-browser.mjs URL\n');
  process.exit(2);
}
browse(target).catch((error) => {
  log(`error ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
