import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { consentKey, currentConsentLinkKey } from '../cache/cache-keys.js';
import type { CacheStore } from '../cache/store.js';
import { CONSENT_PATHS } from './paths.js';
import { createSealedRecords, type Lookup } from './records.js';

const linkSchema = z.object({
  route: z.string(),
  issuer: z.string(),
  subject: z.string(),
  /** The MCP client whose request asked for consent, shown on the consent page. */
  clientId: z.string().optional(),
  elicitationId: z.string(),
});

/** The link a principal was last handed on a route: the link itself is a bearer secret, so this is sealed. */
const currentLinkSchema = z.object({
  link: z.string(),
  elicitationId: z.string(),
  clientId: z.string().optional(),
  /** ms since the epoch. */
  expiresAt: z.number(),
});

/** What a consent link stands for: the principal and route it was made for. */
export type ConsentLinkFacts = z.infer<typeof linkSchema>;
type CurrentLink = z.infer<typeof currentLinkSchema>;

export interface IssuedLink {
  readonly url: string;
  readonly elicitationId: string;
}

/**
 * Consent links: `<public_url>/consent/connect?link=<random>`. Only an HMAC of the random part is stored (a Redis
 * dump holds no usable link), with the principal and route sealed; a link opens once and lives `ttlMs` at most.
 * A principal has one live link per route: asking again (every request without a grant does) hands out the same
 * link while it has half its life left, so one caller cannot fill the store with links.
 */
export interface ConsentLinks {
  /** `undefined` when the store did not take it (the caller fails closed). */
  issue(facts: Omit<ConsentLinkFacts, 'elicitationId'>): Promise<IssuedLink | undefined>;
  /** Single use: the second redemption, or one after `ttlMs`, finds nothing. */
  redeem(link: string): Promise<Lookup<ConsentLinkFacts>>;
}

export interface ConsentLinkOptions {
  readonly publicUrl: string;
  readonly ttlMs: number;
  /** Clock in ms since the epoch (injected in tests). */
  readonly now?: () => number;
}

const LINK_BYTES = 32;

export function createConsentLinks(store: CacheStore, keySecret: Buffer, options: ConsentLinkOptions): ConsentLinks {
  const now = options.now ?? Date.now;
  const records = createSealedRecords(store, keySecret, 'consent link', linkSchema);
  const currentLinks = createSealedRecords(store, keySecret, 'current consent link', currentLinkSchema);
  const linkKey = (link: string) => consentKey(keySecret, 'link', link);
  const issued = ({ link, elicitationId }: CurrentLink): IssuedLink => ({ url: `${options.publicUrl}${CONSENT_PATHS.connect}?link=${link}`, elicitationId });

  /** The principal's current link, when it may be handed out again: same client, half its life left, not yet opened. */
  async function reusable(current: CurrentLink, clientId: string | undefined): Promise<Lookup<CurrentLink>> {
    if (current.clientId !== clientId || current.expiresAt - now() < options.ttlMs / 2) return { kind: 'absent' };
    const open = await records.get(linkKey(current.link));
    return open.kind === 'found' ? { kind: 'found', value: current } : open;
  }

  return {
    async issue(facts) {
      const currentKey = currentConsentLinkKey(keySecret, facts.route, facts.issuer, facts.subject);
      const current = await currentLinks.get(currentKey);
      if (current.kind === 'unavailable') return undefined;
      if (current.kind === 'found') {
        const again = await reusable(current.value, facts.clientId);
        if (again.kind === 'unavailable') return undefined;
        if (again.kind === 'found') return issued(again.value);
      }

      const next: CurrentLink = {
        link: randomBytes(LINK_BYTES).toString('base64url'),
        elicitationId: randomUUID(),
        ...(facts.clientId === undefined ? {} : { clientId: facts.clientId }),
        expiresAt: now() + options.ttlMs,
      };
      if (!(await records.put(linkKey(next.link), { ...facts, elicitationId: next.elicitationId }, options.ttlMs))) return undefined;
      if (current.kind === 'found') {
        // The replaced link is never handed out again: it does not stay behind as a record either.
        await currentLinks.put(currentKey, next, options.ttlMs);
        await records.delete(linkKey(current.value.link));
        return issued(next);
      }
      if (await currentLinks.putIfAbsent(currentKey, next, options.ttlMs)) return issued(next);
      // Another request of this principal made a link at the same moment: both hand out that one.
      await records.delete(linkKey(next.link));
      const winner = await currentLinks.get(currentKey);
      return winner.kind === 'found' ? issued(winner.value) : undefined;
    },
    redeem: (link) => records.take(linkKey(link)),
  };
}
