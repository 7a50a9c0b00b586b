// nginx JavaScript (njs 0.7 or later: no for...of) for config/nginx/nginx-with-body.conf: asks the gateway's decision listener about each
// MCP request WITH its body, so per-tool/resource/prompt policy applies to every client revision. The body the
// gateway decides on is the body nginx forwards: nginx holds it in memory (client_body_buffer_size =
// client_max_body_size) and proxy_pass sends those same bytes after the internal redirect.

/** Verdict headers a refused client receives (the challenge, when to retry, the body's type). */
const REFUSAL_HEADERS = ['WWW-Authenticate', 'DPoP-Nonce', 'Retry-After', 'Cache-Control', 'Content-Type'];

async function decide(r) {
  const body = r.requestText;
  if (body === undefined && r.method === 'POST') {
    // Never decided without the exact body (it would have to be read from a temporary file).
    r.return(413, '{"error":"payload_too_large"}');
    return;
  }
  let verdict;
  try {
    verdict = await r.subrequest('/_mcp_decision', { method: r.method, body: body || '' });
  } catch (error) {
    r.error('mcp decision subrequest failed: ' + error);
    r.headersOut['Retry-After'] = '5';
    r.return(503, '{"error":"decision_unavailable"}');
    return;
  }
  if (verdict.status === 200) {
    r.variables.mcp_upstream_authorization = verdict.headersOut['Authorization'] || '';
    r.variables.mcp_identity = verdict.headersOut['X-Gateway-Identity'] || '';
    r.internalRedirect('/_mcp_upstream' + r.uri + (r.variables.args ? '?' + r.variables.args : ''));
    return;
  }
  // nginx's own 502/504 when the listener is down or slow: the gateway cannot decide, the client may retry.
  if (verdict.status === 502 || verdict.status === 504) {
    r.headersOut['Retry-After'] = '5';
    r.return(503, '{"error":"decision_unavailable"}');
    return;
  }
  REFUSAL_HEADERS.forEach(function (name) {
    const value = verdict.headersOut[name];
    if (value) r.headersOut[name] = value;
  });
  r.return(verdict.status, verdict.responseText);
}

export default { decide };
