import { describe, expect, it } from 'vitest';
import { allowHeaders, NGINX_BODY_HEADER, refusalForProxy } from '../../../../src/doors/decision-listener/verdict.js';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

describe('refusalForProxy', () => {
  it('a refusal the proxy mode answers with 200 (user_oauth elicitation) is never a verdict to forward: 403, same body', () => {
    const body = '{"jsonrpc":"2.0","id":1,"error":{"code":-32042,"message":"x"}}';
    for (const dialect of ['nginx', 'envoy', 'traefik'] as const) {
      const refusal = refusalForProxy({ statusCode: 200, headers: JSON_TYPE, body }, dialect);
      expect([refusal.statusCode, refusal.body]).toEqual([403, body]);
    }
  });

  it('a user_oauth tool error holding the consent link (a JSON-RPC result in a 200) is a 403 too, never "allowed"', () => {
    const body = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Connect: open https://gw/consent/connect?link=x"}],"isError":true}}';
    for (const dialect of ['nginx', 'envoy', 'traefik'] as const) {
      expect(refusalForProxy({ statusCode: 200, headers: JSON_TYPE, body }, dialect)).toMatchObject({ statusCode: 403, body });
    }
  });

  it('nginx gets the body in a header as well (it never shows a refused subrequest body); the others do not', () => {
    const refusal = { statusCode: 401, headers: JSON_TYPE, body: '{"error":"missing_token"}' };
    expect(refusalForProxy(refusal, 'nginx').headers[NGINX_BODY_HEADER]).toBe(refusal.body);
    expect(refusalForProxy(refusal, 'envoy')).toBe(refusal);
  });
});

describe('allowHeaders', () => {
  it('carries the upstream headers, and for Envoy the client credentials it does not replace to remove', () => {
    const upstreamHeaders = { authorization: 'Bearer upstream' };
    expect(allowHeaders(upstreamHeaders, 'envoy')).toEqual({ authorization: 'Bearer upstream', 'x-envoy-auth-headers-to-remove': 'proxy-authorization, cookie, dpop' });
    expect(allowHeaders(upstreamHeaders, 'nginx')).toEqual({ authorization: 'Bearer upstream' });
  });
});
