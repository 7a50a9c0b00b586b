import { ConsentBrowser, completeConsentHeadlessly } from '../../../examples/demo/headless-consent.js';
import type { MatrixContext } from '../context.js';
import { fail, pass, type Cell, type RouteKind } from '../matrix.js';

/** The gateway's consent link in a text a client showed (an error message or a tool error). */
const CONSENT_LINK = /https?:\/\/\S+\/consent\/connect\?link=[A-Za-z0-9_-]+/;

export function consentLinkIn(text: string): URL | undefined {
  const found = CONSENT_LINK.exec(text)?.[0];
  return found === undefined ? undefined : new URL(found);
}

/**
 * Every client of the run signs in as the demo's one user: the account a client before connected is disconnected
 * first, on the gateway's grants page, so each client meets the route without a grant.
 */
async function disconnectAll(gateway: string): Promise<void> {
  const browser = new ConsentBrowser();
  const page = await browser.walk(new URL('/consent/grants', gateway), { decision: 'deny' });
  if (page.kind !== 'page') return;
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)?.[1] ?? '';
  const connected = [...page.html.matchAll(/name="route" value="([^"]+)"><button type="submit" name="decision" value="revoke"/g)].map((match) => match[1] ?? '');
  for (const route of connected) await browser.submit(new URL('/consent/grants/revoke', gateway), { csrf, route, decision: 'revoke' }, { decision: 'deny' });
}

/**
 * The per-user grant route, as a person at this client would go through it: the first connection fails with the
 * consent link in its text (the client shows it), the person opens it and allows (headless: the demo's development
 * authorization servers approve at once), then connects again and calls `list_notes`.
 */
async function perUserGrant(route: URL, attempt: () => Promise<string>, shownAs: string): Promise<Cell> {
  await disconnectAll(route.origin);
  const first = await attempt().then(
    (text) => ({ text, failed: false }),
    (error: unknown) => ({ text: error instanceof Error ? error.message : String(error), failed: true }),
  );
  if (!first.failed) return fail('answered before any consent');
  const link = consentLinkIn(first.text);
  if (link === undefined) return fail(`no consent link shown: "${first.text.slice(0, 120)}"`);
  const consent = await completeConsentHeadlessly(link, { decision: 'allow' });
  if (consent.heading !== 'Connected') return fail(`consent page ended at "${consent.heading}"`);
  const answer = await attempt().catch((error: unknown) => `failed: ${error instanceof Error ? error.message : String(error)}`);
  return answer === '(no notes)' || /^\d+\. /.test(answer) ? pass(shownAs) : fail(`list_notes after consent: "${answer.slice(0, 120)}"`);
}

/**
 * One tool call as the client under test makes it, the first text of its answer (a failure throws with what the
 * client showed). `session` names the client's state: the two attempts on the per-user grant route share one (the
 * person's client keeps its token while they connect their account), every other route has its own.
 */
export type ToolCall = (url: URL, tool: string, args: Record<string, number>, session: string) => Promise<string>;

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The demo's route kinds other than the JWT route of the main run: introspection, upfront_scopes, the per-user grant. */
export async function otherRouteKinds(context: MatrixContext, call: ToolCall, linkShownAs = 'link in the error text'): Promise<Partial<Record<RouteKind, Cell>>> {
  context.endOfMainRun();
  const introspected = await call(context.opaqueUrl, 'add', { a: 2, b: 3 }, 'opaque').catch(reason);
  const upfront = await call(context.upfrontUrl, 'multiply', { x: 6, y: 7 }, 'upfront').catch(reason);
  return {
    introspection: introspected === '5' ? pass() : fail(`add answered "${introspected.slice(0, 120)}"`),
    upfront: upfront === '42' ? pass('no step-up needed') : fail(`multiply answered "${upfront.slice(0, 120)}"`),
    'user-grant': await perUserGrant(context.notesUrl, () => call(context.notesUrl, 'list_notes', {}, 'notes'), linkShownAs),
  };
}
