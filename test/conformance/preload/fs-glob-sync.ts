/**
 * `node --import ./test/conformance/preload/fs-glob-sync.ts <conformance CLI>`: on Node < 22 the suite's bundle
 * imports `globSync` from `fs`, which Node 20 lacks; a resolve hook maps that one import to `node:fs` plus a
 * minimal `globSync`. Needed by both phases (index.ts imports it for the server phase).
 */
import * as fs from 'node:fs';
import { register } from 'node:module';

if (!('globSync' in fs)) register('./fs-glob-sync-hooks.ts', import.meta.url);
