import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Check } from '../../src/client/check.js';
import { login } from '../../src/client/login.js';
import { LoginError } from '../../src/client/login-error.js';
import { probe } from '../../src/client/probe.js';
import { Redactor } from '../../src/client/redaction.js';

/**
 * A public MCP server whose metadata names this machine. The test's fetch plays DNS: the public names below reach
 * the planted server on loopback; any URL on a loopback address is sent there too, so a request the address policy
 * should have refused shows up in `paths`.
 */
const MCP = new URL('https://mcp.example.test/mcp');
const PUBLIC_AS = 'https://as.example.test';

interface Planted {
  /** The challenge's resource_metadata. */
  readonly resourceMetadata?: (origin: string) => string;
  /** The protected resource metadata's authorization_servers. */
  readonly authorizationServers?: (origin: string) => string[];
  /** Overrides of the public authorization server's metadata. */
  readonly endpoints?: (origin: string) => Record<string, string>;
}

interface Hostile {
  readonly origin: string;
  /** `GET /path` per request that reached the server, and by which name (`public` or `loopback`). */
  readonly paths: string[];
  readonly fetch: FetchLike;
}

const servers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((close) => close()));
});

async function startHostile(planted: Planted): Promise<Hostile> {
  const paths: string[] = [];
  let origin = '';
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', origin).pathname;
    paths.push(`${request.method ?? 'GET'} ${path} via ${request.headers['x-test-name'] === undefined ? 'loopback' : 'public'}`);
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    if (path === '/mcp') {
      const metadata = planted.resourceMetadata?.(origin) ?? `${MCP.origin}/.well-known/oauth-protected-resource/mcp`;
      json(401, { error: 'unauthorized' }, { 'www-authenticate': `Bearer resource_metadata="${metadata}", scope="mcp:tools"` });
    } else if (path.startsWith('/.well-known/oauth-protected-resource')) {
      json(200, { resource: MCP.href, authorization_servers: planted.authorizationServers?.(origin) ?? [PUBLIC_AS] });
    } else if (path.startsWith('/.well-known/oauth-authorization-server')) {
      json(200, {
        issuer: PUBLIC_AS,
        authorization_endpoint: `${PUBLIC_AS}/authorize`,
        token_endpoint: `${PUBLIC_AS}/token`,
        registration_endpoint: `${PUBLIC_AS}/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        ...planted.endpoints?.(origin),
      });
    } else {
      json(404, { error: 'not_found' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(() => resolve()));
  });
  const fetchVia: FetchLike = (url, init) => {
    const target = new URL(url);
    const named = target.hostname.endsWith('.example.test');
    const rewritten = new URL(`${target.pathname}${target.search}`, origin);
    const headers = new Headers(init?.headers);
    if (named) headers.set('x-test-name', target.hostname);
    // The run's own dispatcher would refuse the rewritten loopback URL: this fetch stands in for DNS, after the policy.
    return fetch(rewritten, { ...init, headers, dispatcher: undefined });
  };
  return { origin, paths, fetch: fetchVia };
}

async function probeChecks(hostile: Hostile, allowPrivate = false): Promise<Record<string, Check>> {
  const result = await probe({ url: MCP, timeoutMs: 5_000, fetch: hostile.fetch, allowPrivate });
  if (!result.reachable) throw new Error(result.reason);
  return Object.fromEntries(result.checks.map((check) => [check.id, check]));
}

const loopbackRequests = (hostile: Hostile) => hostile.paths.filter((path) => path.endsWith('via loopback'));

describe('probe: URLs a public deployment names on non-public addresses are refused, not fetched', () => {
  it('a challenge resource_metadata on a loopback address: refused, metadata found at path shape A instead', async () => {
    const hostile = await startHostile({ resourceMetadata: (origin) => `${origin}/.well-known/oauth-protected-resource/internal` });
    const checks = await probeChecks(hostile);
    expect(checks['resource-metadata']?.message).toContain(`${hostile.origin}/.well-known/oauth-protected-resource/internal (refused 127.0.0.1: a loopback address, named by the server rather than typed by you (pass --allow-private to allow it))`);
    expect(loopbackRequests(hostile)).toEqual([]);
  });

  it.each<[string, (origin: string) => string, string]>([
    ['an IPv4-mapped IPv6 loopback', (origin) => origin.replace('127.0.0.1', '[::ffff:127.0.0.1]'), 'refused [::ffff:7f00:1]: a loopback address'],
    ['a decimal IPv4 loopback', (origin) => origin.replace('127.0.0.1', '2130706433'), 'refused 127.0.0.1: a loopback address'],
    ['localhost with a trailing dot', (origin) => origin.replace('127.0.0.1', 'localhost.'), 'refused localhost.: a loopback name'],
  ])('an authorization server on %s: as-metadata fails with the refusal, nothing fetched there', async (_name, spell, refusal) => {
    const hostile = await startHostile({ authorizationServers: (origin) => [`${spell(origin)}/as`] });
    const checks = await probeChecks(hostile);
    expect(checks['as-metadata']).toMatchObject({ status: 'fail', message: expect.stringContaining(refusal) as unknown });
    expect(checks.registration?.status).toBe('fail');
    expect(loopbackRequests(hostile)).toEqual([]);
  });

  it('a public authorization server whose token endpoint is a hex loopback literal: as-addresses fails', async () => {
    const hostile = await startHostile({ endpoints: (origin) => ({ token_endpoint: `${origin.replace('127.0.0.1', '0x7f000001')}/token` }) });
    const checks = await probeChecks(hostile);
    expect(checks['as-addresses']).toMatchObject({ status: 'fail', message: expect.stringContaining('refused 127.0.0.1: a loopback address') as unknown });
    expect(checks['as-metadata']?.status).toBe('pass');
  });

  it('--allow-private: the same loopback resource_metadata is fetched', async () => {
    const hostile = await startHostile({ resourceMetadata: (origin) => `${origin}/.well-known/oauth-protected-resource/internal` });
    const checks = await probeChecks(hostile, true);
    expect(checks['resource-metadata']?.message).toBe(`found at ${hostile.origin}/.well-known/oauth-protected-resource/internal, the challenge's resource_metadata URL`);
    expect(loopbackRequests(hostile)).toEqual(['GET /.well-known/oauth-protected-resource/internal via loopback']);
  });
});

describe('login: no request and no browser goes to a non-public address a public deployment names', () => {
  it.each<[string, Planted]>([
    ['an authorization server on the cloud metadata address', { authorizationServers: () => ['http://169.254.169.254/as'] }],
    ['a token endpoint on a loopback literal', { endpoints: (origin) => ({ token_endpoint: `${origin}/token` }) }],
    ['an authorization endpoint on [::1]', { endpoints: (origin) => ({ authorization_endpoint: `${origin.replace('127.0.0.1', '[::1]')}/authorize` }) }],
  ])('%s: login fails before registering or authorizing, naming the refusal', async (_name, planted) => {
    const hostile = await startHostile(planted);
    const presented: URL[] = [];
    const failure = await login({
      url: MCP,
      timeoutMs: 5_000,
      authorizationTimeoutMs: 5_000,
      presentAuthorizationUrl: (url) => Promise.resolve(void presented.push(url)),
      log: () => undefined,
      redactor: new Redactor(),
      tokenStorePath: join(await mkdtemp(join(tmpdir(), 'mcp-login-addresses-')), 'tokens.json'),
      fetch: hostile.fetch,
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(LoginError);
    expect((failure as LoginError).message).toMatch(/^no authorization server a client may use: .*refused /);
    expect((failure as LoginError).message).toContain('pass --allow-private to allow it');
    expect(presented).toEqual([]);
    expect(hostile.paths.filter((path) => /\/(register|token|authorize)/.test(path))).toEqual([]);
    expect(loopbackRequests(hostile)).toEqual([]);
  });
});
