import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TrustedProxies } from '../config/trusted-proxies.js';
import { flowCookie } from './consent.js';
import { requestFacts } from './shared/request-facts.js';

/** What this door needs of the gateway's authorization server (src/authserver/gateway-authorization-server.ts). */
export interface AuthorizationServerEndpoints {
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    context: { readonly cookie: { set(value: string): string }; readonly clientAddress: string | undefined },
  ): Promise<void>;
}

export interface AuthorizationServerRoutesOptions {
  /** URL patterns the authorization server answers (fixed at start: its issuer is a restart-only setting). */
  readonly paths: readonly string[];
  /** The authorization server of the config this request runs on; absent when a reload turned it off. */
  readonly serverOf: (request: FastifyRequest) => AuthorizationServerEndpoints | undefined;
  /** Whose forwarding headers count, for the client's address (the config this request runs on). */
  readonly trustedProxiesOf: (request: FastifyRequest) => TrustedProxies;
  readonly publicUrl: URL;
  readonly logError: (request: FastifyRequest, error: unknown) => void;
}

const METHODS = ['GET', 'HEAD', 'POST', 'OPTIONS'] as const;

/**
 * The gateway's authorization server on the main listener: metadata (RFC 8414, OpenID Connect Discovery),
 * authorization, token, registration, revocation, introspection, JWKS and its consent pages. oidc-provider
 * answers on the raw request; the body the main listener already read is handed over as `req.body`.
 */
export function registerAuthorizationServerRoutes(app: FastifyInstance, options: AuthorizationServerRoutesOptions): void {
  const cookie = flowCookie(options.publicUrl);
  for (const url of options.paths) {
    app.route({
      method: [...METHODS],
      url,
      exposeHeadRoute: false,
      handler: async (request, reply) => {
        const server = options.serverOf(request);
        if (!server) return reply.callNotFound();
        reply.hijack();
        const raw = request.raw as IncomingMessage & { body?: unknown };
        if (request.body !== undefined) raw.body = request.body;
        try {
          const { clientAddress } = requestFacts(request, options.trustedProxiesOf(request));
          await server.handle(raw, reply.raw, { cookie, clientAddress });
        } catch (error) {
          options.logError(request, error);
          if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          reply.raw.end(reply.raw.headersSent ? undefined : JSON.stringify({ error: 'server_error' }));
        }
        return reply;
      },
    });
  }
}
