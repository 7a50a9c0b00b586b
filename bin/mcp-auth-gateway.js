#!/usr/bin/env node
// The `mcp-auth-gateway` command: the compiled CLI, or, in a checkout not built yet, how to build it. It exists
// before any build, so npm links it at install (npx caches a link to a missing dist/main.js as "not found").
import { existsSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const entry = new URL('../dist/main.js', import.meta.url);
if (existsSync(entry)) {
  await import(entry.href);
} else {
  const root = fileURLToPath(new URL('..', import.meta.url)).replace(/[\\/]$/, '');
  process.stderr.write(`mcp-auth-gateway is not built yet. Build it once: cd ${root} && npm run build\n`);
  process.exitCode = 1;
}
