import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_DIR_VARIABLE } from '../../src/client/token-store.js';
import { runLogin } from '../helpers/login.js';
import { CONSENT_URL, fixturePerTest } from './client-fixture.js';

/** The protocol revision `login` speaks: 2026-07-28 when the server offers it, else 2025-11-25. */

const fixture = fixturePerTest();
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  env = { [CONFIG_DIR_VARIABLE]: await mkdtemp(join(tmpdir(), 'mcp-login-wire-')) };
});

describe('login on a 2026-07-28 server', () => {
  it('speaks its wire: server/discover, then tools/list and tools/call with their mirrored headers; no initialize', async () => {
    const deployment = await fixture('clean', { wire: 'modern' });
    const { code, stderr } = await runLogin([deployment.url.href, '--call-tool', 'regional', '--tool-arguments', '{"region":"eu-west 1 ☀","query":"q"}'], env);
    expect(stderr).toContain('initialize: modern fixture answered (MCP 2026-07-28)');
    expect(stderr).toContain('tools/call regional: ok');
    expect(code).toBe(0);
    // The fixture answers only requests whose headers equal the body (the gateway's own check), Mcp-Param-Region too.
    expect(deployment.requests.filter((request) => request.endsWith('headers ok'))).toEqual(['server/discover headers ok', 'tools/list headers ok', 'tools/call headers ok']);
  });

  it('authorizes on the 401 to server/discover like on any other request', async () => {
    const deployment = await fixture('clean', { wire: 'modern' });
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain('initialize: 401, authorization needed');
    expect(code).toBe(0);
    expect(deployment.requests).toContain('GET /as/authorize');
  });

  it('a tool whose x-mcp-header annotation is invalid is left out of tools/list, with the reason', async () => {
    const deployment = await fixture('clean', { wire: 'modern' });
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain('tools/list: tool broken left out: x-mcp-header is not reachable through properties alone');
    expect(stderr).toContain('tools/list: 2 tool(s)');
    expect(code).toBe(0);
  });

  it('an UnsupportedProtocolVersion error naming 2026-07-28 is retried with it once, and the session stays on 2026-07-28', async () => {
    const deployment = await fixture('first-version-refused', { wire: 'modern' });
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain('(MCP 2026-07-28)');
    expect(code).toBe(0);
    expect(deployment.requests.filter((request) => request.endsWith('headers ok'))).toEqual(['server/discover headers ok', 'tools/list headers ok']);
  });

  it('an UnsupportedProtocolVersion error naming only 2025-11-25: initialize on 2025-11-25', async () => {
    const deployment = await fixture('only-2025-11-25');
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toContain('initialize: calculator answered (MCP 2025-11-25)');
    expect(code).toBe(0);
  });

  it('a 2025-11-25 server is spoken to as before: initialize after a server/discover it does not know', async () => {
    const deployment = await fixture('clean');
    const { code, stderr } = await runLogin([deployment.url.href], env);
    expect(stderr).toMatch(/initialize: calculator answered \(MCP 2025-11-25\)/);
    expect(code).toBe(0);
  });
});

describe('login when a per-user grant is missing (URL elicitation)', () => {
  it.each<[string, 'legacy' | 'modern', string]>([
    ['2025-11-25: initialize answered with the JSON-RPC error -32042', 'legacy', 'initialize'],
    ['2026-07-28: tools/call answered input_required with an elicitation/create of mode url', 'modern', 'tools/call add'],
  ])('%s: the link is printed with a line saying to open it, exit 1', async (_name, wire, operation) => {
    const deployment = await fixture('url-elicitation', { wire });
    const { code, stderr } = await runLogin([deployment.url.href, '--call-tool', 'add', '--tool-arguments', '{"a":1,"b":2}'], env);
    expect(stderr).toContain(`${operation}: the server needs you to grant access first: Connect your example account`);
    expect(stderr).toContain(`Open this link in your browser, then run login again: ${CONSENT_URL}`);
    expect(stderr).toContain(`login failed: ${operation}: access not granted yet (URL elicitation): open the link above, then run login again`);
    expect(code).toBe(1);
  });

  it('a tools/call answered with a tool error holding the link (a client without URL elicitation, mid-session): the tool\'s text is printed', async () => {
    const deployment = await fixture('consent-tool-error');
    const { stderr } = await runLogin([deployment.url.href, '--call-tool', 'add', '--tool-arguments', '{"a":1,"b":2}'], env);
    expect(stderr).toContain(`tools/call add: the tool reported an error: Connect your example account: open ${CONSENT_URL} in a browser`);
  });
});
