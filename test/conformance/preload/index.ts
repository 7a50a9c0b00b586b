/**
 * `node --import tsx --import ./test/conformance/preload/index.ts <conformance CLI>`: prepares the suite's
 * process to run through the gateway.
 *
 * 1. On Node < 22 the suite's bundle imports `globSync` from `fs`, which Node 20 lacks: fs-glob-sync.ts maps
 *    that one import to `node:fs` plus a minimal `globSync`.
 * 2. The suite's MCP clients know nothing about OAuth: every request to the gateway's origin gets
 *    `Authorization: Bearer $CONFORMANCE_BEARER_TOKEN`. It is added in undici's global dispatcher, which both
 *    Node's fetch and undici's own `request` (used by the DNS rebinding scenario) go through.
 */
import { getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { withBearer } from './bearer-headers.js';
import './fs-glob-sync.js';

const origin = process.env.CONFORMANCE_GATEWAY_ORIGIN;
const token = process.env.CONFORMANCE_BEARER_TOKEN;
if (origin === undefined || token === undefined) {
  throw new Error('conformance preload: CONFORMANCE_GATEWAY_ORIGIN and CONFORMANCE_BEARER_TOKEN must be set');
}
const target = { origin: new URL(origin).origin, token };

setGlobalDispatcher(
  getGlobalDispatcher().compose((dispatch) => (options, handler) => {
    const headers = withBearer(target, options.origin, options.headers);
    return dispatch(headers === undefined ? options : { ...options, headers: headers.flat() }, handler);
  }),
);
