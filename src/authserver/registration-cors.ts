import type { KoaContextWithOIDC } from 'oidc-provider';

const PREFLIGHT_MAX_AGE_SECONDS = '3600';

/**
 * CORS for RFC 7591 registration, which oidc-provider serves without any, so a browser-based MCP client (a page
 * doing discovery, registration and the token request itself) could not register. Registration is open and its
 * answer is meant for whoever asked, so any origin may read it; no credentials are involved. Headers are set
 * before oidc-provider runs, which keeps them on its error answers too. Other endpoints get oidc-provider's own
 * CORS: open on discovery and JWKS, by the client's redirect URI origins on the token endpoint.
 */
export function registrationCors(registrationPath: string) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<unknown>): Promise<unknown> => {
    if (ctx.path !== registrationPath || ctx.get('Origin') === '') return next();
    ctx.set('Access-Control-Allow-Origin', '*');
    if (ctx.method !== 'OPTIONS' || ctx.get('Access-Control-Request-Method') === '') return next();
    ctx.set('Access-Control-Allow-Methods', 'POST');
    const requested = ctx.get('Access-Control-Request-Headers');
    if (requested !== '') ctx.set('Access-Control-Allow-Headers', requested);
    ctx.set('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
    ctx.status = 204;
    return undefined;
  };
}
