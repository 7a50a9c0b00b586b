import { fail, notApplicable, pass, type Cell, type Column } from './matrix.js';

/** One HTTP exchange the gateway or the authorization server served, reduced to what the cells are judged on. */
export interface Exchange {
  readonly server: 'gateway' | 'authorization-server';
  readonly method: string;
  readonly path: string;
  /** Query parameters of authorization requests (never of anything carrying a code or token). */
  readonly query: Readonly<Record<string, string>>;
  readonly status: number | undefined;
  readonly contentType: string | undefined;
  /** The request carried Mcp-Session-Id / the answer issued one. */
  readonly sentSessionId: boolean;
  readonly issuedSessionId: boolean;
}

/** A gateway audit line (README "Audit log"), the fields used here. */
export interface AuditLine {
  readonly jsonrpc_method?: string;
  readonly tool?: string;
  readonly status?: number;
}

/** What the client itself showed: the results of `add(2, 3)` and `multiply(6, 7)`. */
export interface ClientResults {
  readonly added: boolean;
  readonly multiplied: boolean;
}

export interface Evidence {
  readonly exchanges: readonly Exchange[];
  readonly audit: readonly AuditLine[];
  readonly results: ClientResults;
}

const PRM_PREFIX = '/.well-known/oauth-protected-resource';
const AS_METADATA = new Set(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']);
/** The step-up scope of the demo's `multiply`. */
const STEP_UP_SCOPE = 'calc:write';

const ok = (exchange: Exchange) => exchange.status !== undefined && exchange.status >= 200 && exchange.status < 300;
const at = (server: Exchange['server'], method: string, path: string) => (exchange: Exchange) =>
  exchange.server === server && exchange.method === method && exchange.path === path;
/** Authorization requests, not oidc-provider's `/auth/<uid>` resumptions. */
const authorizationRequests = (exchanges: readonly Exchange[]) => exchanges.filter(at('authorization-server', 'GET', '/auth'));

function discovery(exchanges: readonly Exchange[]): Cell {
  const fetched = (server: Exchange['server'], isDocument: (path: string) => boolean) =>
    exchanges.some((e) => e.server === server && e.method === 'GET' && isDocument(e.path) && ok(e));
  const resourceMetadata = fetched('gateway', (path) => path.startsWith(PRM_PREFIX));
  const serverMetadata = fetched('authorization-server', (path) => AS_METADATA.has(path));
  if (resourceMetadata && serverMetadata) return pass();
  return fail(resourceMetadata ? 'no authorization server metadata' : 'no protected resource metadata');
}

/** DCR counts once the client went on to use its registration (a page that cannot read the answer does not). */
function registration(exchanges: readonly Exchange[]): Cell {
  const registered = exchanges.findIndex((e) => at('authorization-server', 'POST', '/reg')(e) && e.status === 201);
  if (registered !== -1) {
    return authorizationRequests(exchanges.slice(registered)).length > 0 ? pass('DCR') : fail('registered, never authorized');
  }
  if (authorizationRequests(exchanges).some((e) => /^https?:\/\//.test(e.query.client_id ?? ''))) return pass('CIMD');
  return fail();
}

function pkce(exchanges: readonly Exchange[]): Cell {
  const requests = authorizationRequests(exchanges);
  if (requests.length === 0) return fail('no authorization request');
  return requests.every((e) => e.query.code_challenge_method === 'S256' && (e.query.code_challenge ?? '') !== '') ? pass() : fail();
}

function token(exchanges: readonly Exchange[]): Cell {
  return exchanges.some((e) => at('authorization-server', 'POST', '/token')(e) && ok(e)) ? pass() : fail();
}

function toolCalls(audit: readonly AuditLine[], tool: string): AuditLine[] {
  return audit.filter((line) => line.jsonrpc_method === 'tools/call' && line.tool === tool);
}

function toolsCall({ audit, results }: Evidence): Cell {
  return results.added && toolCalls(audit, 'add').some((line) => line.status === 200) ? pass() : fail();
}

/**
 * Step-up passes when the gateway refused `multiply` with 403, the client authorized again asking for the
 * missing scope, and `multiply` then succeeded. A client that asked for every scope at its first authorization
 * never meets the 403: not applicable.
 */
function stepUp({ exchanges, audit, results }: Evidence): Cell {
  const calls = toolCalls(audit, 'multiply');
  const refused = calls.some((line) => line.status === 403);
  const succeeded = results.multiplied && calls.some((line) => line.status === 200);
  if (!refused) return succeeded ? notApplicable('scope held from the start') : fail('multiply never succeeded');
  const askedAgain = authorizationRequests(exchanges).some((e) => (e.query.scope ?? '').split(' ').includes(STEP_UP_SCOPE));
  if (succeeded && askedAgain) return pass();
  return fail(askedAgain ? 'authorized again, multiply still refused' : 'did not authorize again for the challenged scope');
}

function sse(exchanges: readonly Exchange[]): Cell {
  const streams = exchanges.filter((e) => e.server === 'gateway' && ok(e) && (e.contentType ?? '').startsWith('text/event-stream'));
  const kinds = [...new Set(streams.map((e) => e.method))].sort();
  return kinds.length > 0 ? pass(kinds.join(' + ')) : fail();
}

function session(exchanges: readonly Exchange[]): Cell {
  const mcp = exchanges.filter((e) => e.server === 'gateway' && !e.path.startsWith('/.well-known/') && e.method !== 'OPTIONS');
  const issuedAt = mcp.findIndex((e) => e.issuedSessionId);
  if (issuedAt === -1) return fail('no session issued');
  return mcp.slice(issuedAt + 1).some((e) => e.sentSessionId && ok(e)) ? pass() : fail('session id not sent back');
}

/** Every cell of one client's row from what was observed during its run. */
export function judge(evidence: Evidence): Record<Column, Cell> {
  const { exchanges } = evidence;
  return {
    discovery: discovery(exchanges),
    registration: registration(exchanges),
    pkce: pkce(exchanges),
    token: token(exchanges),
    'tools/call': toolsCall(evidence),
    'step-up': stepUp(evidence),
    sse: sse(exchanges),
    session: session(exchanges),
  };
}
