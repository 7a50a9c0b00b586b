import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InteractionResults, Provider } from 'oidc-provider';
import type { Logger } from 'pino';
import { PAGE_HEADERS, renderConsentPage, renderErrorPage, renderLoginPage } from './pages.js';
import { isLoopbackHostname } from './redirect-uris.js';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

export interface InteractionSettings {
  readonly provider: Provider;
  /** Origin of the server's own pages; a form POST from anywhere else is refused. */
  readonly origin: string;
  /** Who the next sign-in is. */
  readonly accountId: () => string;
  readonly autoApprove: boolean;
  readonly logger: Logger | undefined;
}

export type InteractionHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

const ROUTE = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|confirm|abort))?$/;

/** The prompt each form button answers. */
const PROMPT_OF_ACTION: Readonly<Record<string, string>> = { login: 'login', confirm: 'consent' };

/** The path of a request target, without query; never parsed as a URL (`//host/x` must stay a path). */
export function requestPath(req: IncomingMessage): string {
  const target = req.url ?? '/';
  const queryStart = target.indexOf('?');
  return queryStart === -1 ? target : target.slice(0, queryStart);
}

/** `/interaction/...` paths, answered here rather than by oidc-provider. */
export function isInteractionPath(pathname: string): boolean {
  return pathname.startsWith('/interaction/');
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function asStringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return isStringArray(value) ? value : [];
}

class InteractionError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
  ) {
    super(error);
  }
}

/** Grants what the consent prompt found missing: the requested scopes, per requested resource. */
async function grantConsent(provider: Provider, interaction: Interaction): Promise<InteractionResults> {
  const accountId = interaction.session?.accountId;
  const clientId = interaction.params.client_id;
  if (accountId === undefined || typeof clientId !== 'string') throw new InteractionError(400, 'login_required');
  const existing = interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId);
  const grant = existing ?? new provider.Grant({ accountId, clientId });
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = interaction.prompt.details;
  if (isStringArray(missingOIDCScope)) grant.addOIDCScope(missingOIDCScope.join(' '));
  if (isStringArray(missingOIDCClaims)) grant.addOIDCClaims(missingOIDCClaims);
  if (typeof missingResourceScopes === 'object' && missingResourceScopes !== null) {
    for (const [indicator, scopes] of Object.entries(missingResourceScopes)) {
      if (isStringArray(scopes)) grant.addResourceScope(indicator, scopes.join(' '));
    }
  }
  const grantId = await grant.save();
  return { consent: existing ? {} : { grantId } };
}

function promptResult(settings: InteractionSettings, interaction: Interaction): Promise<InteractionResults> {
  switch (interaction.prompt.name) {
    case 'login': {
      const accountId = settings.accountId();
      // Auto-approve signs in without a page: the log says who.
      if (settings.autoApprove) settings.logger?.info({ account: accountId }, 'signed in without a page (auto-approve)');
      return Promise.resolve({ login: { accountId } });
    }
    case 'consent':
      return grantConsent(settings.provider, interaction);
    default:
      throw new InteractionError(400, 'unsupported_prompt');
  }
}

async function consentPage(provider: Provider, interaction: Interaction): Promise<string> {
  const clientId = String(interaction.params.client_id);
  const client = await provider.Client.find(clientId);
  const redirectUri = new URL(String(interaction.params.redirect_uri));
  return renderConsentPage({
    uid: interaction.uid,
    clientId,
    clientName: client?.clientName ?? clientId,
    redirectHost: redirectUri.host,
    redirectIsLoopback: isLoopbackHostname(redirectUri.hostname),
    resources: asStringList(interaction.params.resource),
    scopes: asStringList(interaction.params.scope).flatMap((scope) => scope.split(' ')).filter(Boolean),
  });
}

function sendPage(res: ServerResponse, status: number, html: string): void {
  res.writeHead(status, PAGE_HEADERS);
  res.end(html);
}

/**
 * The login and consent steps oidc-provider delegates to the host application. Login is a single button (or
 * nothing, with autoApprove) for one fixed account: a development server holds no passwords.
 */
export function createInteractionHandler(settings: InteractionSettings): InteractionHandler {
  const { provider } = settings;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const match = ROUTE.exec(requestPath(req));
    if (!match) throw new InteractionError(404, 'not_found');
    const [, uid, action] = match;
    if (req.method !== (action === undefined ? 'GET' : 'POST')) throw new InteractionError(405, 'method_not_allowed');
    if (req.method === 'POST' && req.headers.origin !== undefined && req.headers.origin !== settings.origin) {
      throw new InteractionError(403, 'cross_origin_form');
    }
    const interaction = await provider.interactionDetails(req, res);
    if (interaction.uid !== uid) throw new InteractionError(400, 'interaction_mismatch');

    if (action === 'abort') {
      const denied = { error: 'access_denied', error_description: 'End-User denied the request' };
      await provider.interactionFinished(req, res, denied, { mergeWithLastSubmission: false });
      return;
    }
    if (action !== undefined && PROMPT_OF_ACTION[action] !== interaction.prompt.name) {
      throw new InteractionError(400, 'prompt_mismatch');
    }
    if (action !== undefined || settings.autoApprove) {
      const result = await promptResult(settings, interaction);
      await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: interaction.prompt.name !== 'login' });
      return;
    }
    const html =
      interaction.prompt.name === 'login'
        ? renderLoginPage(interaction.uid, settings.accountId())
        : await consentPage(provider, interaction);
    sendPage(res, 200, html);
  }

  return async (req, res) => {
    try {
      await handle(req, res);
    } catch (error) {
      const known = error instanceof InteractionError ? error : toExposedError(error);
      if (known === undefined) settings.logger?.error({ err: error }, 'interaction failed');
      if (!res.headersSent) sendPage(res, known?.status ?? 500, renderErrorPage(known?.error ?? 'server_error', undefined));
      else res.end();
    }
  };
}

/** oidc-provider errors (e.g. an expired interaction) carry a client-safe status and code. */
function toExposedError(error: unknown): InteractionError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { status, error: code, expose } = error as { status?: unknown; error?: unknown; expose?: unknown };
  if (expose !== true || typeof status !== 'number' || typeof code !== 'string') return undefined;
  return new InteractionError(status, code);
}
