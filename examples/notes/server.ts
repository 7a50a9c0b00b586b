import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { z } from 'zod';
import { runWhenMain, startMcpHttpServer, type McpHttpServer, type McpHttpServerOptions } from '../mcp-http-server.js';

export interface NotesOptions extends Pick<McpHttpServerOptions, 'host' | 'port'> {
  /** Its own authorization server (the "vendor" in the user_oauth demo): access tokens must come from it. */
  readonly issuer: string;
  readonly jwksUri: string;
  /** The `aud` its access tokens must carry (its RFC 8707 resource identifier). */
  readonly resource: string;
}

export interface NotesServer extends McpHttpServer {
  /** Test hook: refuse (401) every token of `subject` from now on, as if the user revoked access at the vendor. */
  refuseTokensOf(subject: string): void;
}

function text(value: string): { content: [{ type: 'text'; text: string }] } {
  return { content: [{ type: 'text', text: value }] };
}

/** Who the tool runs for: the subject of the request's own access token (never shared between users). */
function subjectOf(authInfo: AuthInfo | undefined): string {
  const subject = authInfo?.extra?.sub;
  if (typeof subject !== 'string') throw new Error('no authenticated user');
  return subject;
}

/** Notes per user, in memory: `list_notes` and `add_note` act on the caller's own notes only. */
export function createNotesServer(notes: Map<string, string[]>): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool(
    'list_notes',
    { title: 'List notes', description: 'Lists your notes, oldest first.', inputSchema: {} },
    (_args, extra) => {
      const mine = notes.get(subjectOf(extra.authInfo)) ?? [];
      return text(mine.length === 0 ? '(no notes)' : mine.map((note, index) => `${index + 1}. ${note}`).join('\n'));
    },
  );
  server.registerTool(
    'add_note',
    { title: 'Add a note', description: 'Adds a note to your notes.', inputSchema: { text: z.string().min(1).max(1000).describe('The note') } },
    ({ text: note }, extra) => {
      const subject = subjectOf(extra.authInfo);
      const mine = notes.get(subject) ?? [];
      mine.push(note);
      notes.set(subject, mine);
      return text(`added note ${mine.length}`);
    },
  );
  return server;
}

/**
 * The example notes MCP server: a third-party ("vendor") MCP server that trusts only its own authorization
 * server. Every request needs an access token from `issuer` for `resource` (RFC 9068 JWT, checked with jose);
 * notes are kept per token subject. Behind the gateway it is a `user_oauth` route: each user connects their own
 * account.
 */
export async function startNotes(options: NotesOptions): Promise<NotesServer> {
  const keys = createRemoteJWKSet(new URL(options.jwksUri));
  const notes = new Map<string, string[]>();
  const refused = new Set<string>();

  async function authenticate(req: IncomingMessage): Promise<AuthInfo | undefined> {
    const match = /^Bearer ([\x21-\x7E]+)$/i.exec(req.headers.authorization ?? '');
    if (!match?.[1]) return undefined;
    try {
      const { payload } = await jwtVerify(match[1], keys, { issuer: options.issuer, audience: options.resource, algorithms: ['ES256', 'RS256'] });
      if (typeof payload.sub !== 'string' || refused.has(payload.sub)) return undefined;
      return {
        token: match[1],
        clientId: typeof payload.client_id === 'string' ? payload.client_id : '',
        scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [],
        ...(payload.exp === undefined ? {} : { expiresAt: payload.exp }),
        extra: { sub: payload.sub },
      };
    } catch {
      return undefined;
    }
  }

  const server = await startMcpHttpServer({ host: options.host, port: options.port, authenticate, createServer: () => createNotesServer(notes) });
  return { ...server, refuseTokensOf: (subject) => void refused.add(subject) };
}

runWhenMain(
  import.meta.url,
  'notes',
  3002,
  ({ host, port, values: { issuer, resource } }) => {
    if (issuer === undefined || resource === undefined) throw new TypeError('--issuer URL and --resource URL are required');
    // A development authorization server's key set (mcp-auth-gateway dev-auth-server) is at <issuer>/jwks.
    return startNotes({ host, port, issuer, jwksUri: `${issuer}/jwks`, resource });
  },
  ['issuer', 'resource'],
);
