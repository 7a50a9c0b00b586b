import { ConsentBrowser, completeConsentHeadlessly } from '../../../examples/demo/headless-consent.js';
import { fail, pass, type Cell } from '../matrix.js';

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
export async function perUserGrant(route: URL, attempt: () => Promise<string>, shownAs = 'link in the error text'): Promise<Cell> {
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
