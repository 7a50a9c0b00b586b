import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { consentKey } from '../cache/cache-keys.js';
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

/** What a consent link stands for: the principal and route it was made for. */
export type ConsentLinkFacts = z.infer<typeof linkSchema>;

export interface IssuedLink {
  readonly url: string;
  readonly elicitationId: string;
}

/**
 * Consent links: `<public_url>/consent/connect?link=<random>`. Only an HMAC of the random part is stored (a Redis
 * dump holds no usable link), with the principal and route sealed; a link opens once and lives `ttlMs` at most.
 */
export interface ConsentLinks {
  /** `undefined` when the store did not take it (the caller fails closed). */
  issue(facts: Omit<ConsentLinkFacts, 'elicitationId'>): Promise<IssuedLink | undefined>;
  /** Single use: the second redemption, or one after `ttlMs`, finds nothing. */
  redeem(link: string): Promise<Lookup<ConsentLinkFacts>>;
}

const LINK_BYTES = 32;

export function createConsentLinks(store: CacheStore, keySecret: Buffer, options: { readonly publicUrl: string; readonly ttlMs: number }): ConsentLinks {
  const records = createSealedRecords(store, keySecret, 'consent link', linkSchema);
  return {
    async issue(facts) {
      const link = randomBytes(LINK_BYTES).toString('base64url');
      const elicitationId = randomUUID();
      const stored = await records.put(consentKey(keySecret, 'link', link), { ...facts, elicitationId }, options.ttlMs);
      return stored ? { url: `${options.publicUrl}${CONSENT_PATHS.connect}?link=${link}`, elicitationId } : undefined;
    },
    redeem: (link) => records.take(consentKey(keySecret, 'link', link)),
  };
}
