import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ConsentPages, ConsentReply, ConsentRequest } from '../grants/consent-pages.js';
import { CONSENT_PATHS } from '../grants/paths.js';
import { failurePage, pageHeaders } from '../grants/pages.js';
import type { ConsentRuntime } from '../grants/service.js';

/** The gateway's authorization server's part of the sign-in callback: `undefined` when the sign-in is not its own. */
export type SignInCallback = (request: ConsentRequest) => Promise<ConsentReply> | undefined;

export interface ConsentRoutesOptions {
  /** The consent runtime of the config this request runs on; absent when no route uses user_oauth. */
  readonly consentOf: (request: FastifyRequest) => ConsentRuntime | undefined;
  /** The sign-ins of the gateway's authorization server, which end at the same callback; absent when it is off. */
  readonly authorizationServerSignInOf?: (request: FastifyRequest) => SignInCallback | undefined;
  readonly publicUrl: URL;
}

/** A consent form is a CSRF token, a decision and a route name: anything much larger is not one. */
const MAX_FORM_BYTES = 4 * 1024;
const FORM_TYPE = 'application/x-www-form-urlencoded';
/** Longest a flow cookie lives in the browser; the flow itself expires server-side (consent.link_ttl) first. */
const COOKIE_MAX_AGE_SECONDS = 900;

/**
 * `__Host-` (Secure, Path=/, no Domain: only this origin can set or read it) when the gateway is served over https;
 * a plain name on http loopback development setups, where browsers refuse `__Host-`. SameSite=Lax: the cookie
 * comes back on the top-level redirects from the authorization servers, never on cross-site forms.
 */
export function flowCookie(publicUrl: URL) {
  const secure = publicUrl.protocol === 'https:';
  const name = secure ? '__Host-mcpgw-consent' : 'mcpgw-consent';
  const attributes = `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  return {
    read(header: string | undefined): string | undefined {
      for (const pair of (header ?? '').split(';')) {
        const eq = pair.indexOf('=');
        if (eq > 0 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
      }
      return undefined;
    },
    set: (value: string) => `${name}=${value}; ${attributes}; Max-Age=${COOKIE_MAX_AGE_SECONDS}`,
    clear: () => `${name}=; ${attributes}; Max-Age=0`,
  };
}

function firstValues(entries: Iterable<[string, string]>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of entries) if (!Object.hasOwn(params, name)) params[name] = value;
  return params;
}

function queryOf(request: FastifyRequest): Record<string, string> {
  const start = request.url.indexOf('?');
  return start === -1 ? {} : firstValues(new URLSearchParams(request.url.slice(start + 1)));
}

function formOf(request: FastifyRequest): Record<string, string> | undefined {
  const type = request.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  const body = request.body;
  if (type !== FORM_TYPE || !(Buffer.isBuffer(body) || typeof body === 'string')) return undefined;
  return firstValues(new URLSearchParams(body.toString()));
}

type Handler = keyof ConsentPages;

/**
 * The consent pages on the main listener under /consent/ (route paths there are refused by the config): links
 * from URL elicitations, the two OAuth callbacks, the consent form, and the user's grants. Plain server-rendered
 * HTML, POST forms with CSRF tokens, no external assets, a strict CSP.
 */
export function registerConsentRoutes(app: FastifyInstance, options: ConsentRoutesOptions): void {
  const cookie = flowCookie(options.publicUrl);

  function send(request: FastifyRequest, reply: FastifyReply, answer: ConsentReply): FastifyReply {
    if (answer.reason !== undefined) request.log.info({ reason: answer.reason }, 'consent page refused');
    if (answer.flowCookie !== undefined) void reply.header('set-cookie', answer.flowCookie === null ? cookie.clear() : cookie.set(answer.flowCookie));
    if (answer.redirect !== undefined) {
      // The next page (an authorization server's, mostly) learns nothing of the URL this came from.
      return reply
        .code(request.method === 'POST' ? 303 : 302)
        .headers({ location: answer.redirect, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' })
        .send();
    }
    const page = answer.page ?? failurePage('failed');
    return reply.code(page.status).headers(pageHeaders(page)).send(page.html);
  }

  function route(method: 'GET' | 'POST', path: string, handler: Handler): void {
    app.route({
      method,
      url: path,
      bodyLimit: MAX_FORM_BYTES,
      handler: async (request, reply) => {
        const params = method === 'GET' ? queryOf(request) : formOf(request);
        if (params === undefined) return send(request, reply, { page: failurePage('failed'), reason: 'not_a_form' });
        const input: ConsentRequest = {
          cookie: cookie.read(request.headers.cookie),
          params,
          origin: typeof request.headers.origin === 'string' ? request.headers.origin : undefined,
        };
        // One sign-in, one callback: a sign-in the gateway's authorization server started is its to finish.
        const authorizationServerSignIn = handler === 'loginCallback' ? options.authorizationServerSignInOf?.(request)?.(input) : undefined;
        if (authorizationServerSignIn) return send(request, reply, await authorizationServerSignIn);
        const consent = options.consentOf(request);
        if (!consent) return send(request, reply, { page: failurePage('not_found') });
        return send(request, reply, await consent.pages[handler](input));
      },
    });
  }

  route('GET', CONSENT_PATHS.connect, 'connect');
  route('GET', CONSENT_PATHS.loginCallback, 'loginCallback');
  route('POST', CONSENT_PATHS.decide, 'decide');
  route('GET', CONSENT_PATHS.callback, 'callback');
  route('GET', CONSENT_PATHS.grants, 'grants');
  route('POST', CONSENT_PATHS.revoke, 'revoke');
  route('POST', CONSENT_PATHS.connectRoute, 'connectRoute');
}
