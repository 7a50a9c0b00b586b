import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { consentKey } from '../cache/cache-keys.js';
import type { CacheStore } from '../cache/store.js';
import { createSealedRecords, type Lookup } from './records.js';

const principal = z.object({ issuer: z.string(), subject: z.string() });

/** The connection a consent link asked for: who, which route, for which MCP client. */
export const connectionSchema = z.object({
  route: z.string(),
  principal,
  clientId: z.string().optional(),
  elicitationId: z.string(),
});

/** The stages after signing in (before, the browser holds the sign-in: sign-in.ts). */
const flowSchema = z.discriminatedUnion('stage', [
  /** Signed in as the link's principal; the consent page is shown. */
  z.object({ stage: z.literal('consent'), expiresAt: z.number(), connection: connectionSchema, csrf: z.string() }),
  /** Allowed; at the upstream's authorization server. */
  z.object({ stage: z.literal('vendor'), expiresAt: z.number(), connection: connectionSchema, state: z.string(), codeVerifier: z.string() }),
  /** Signed in to see and revoke their own grants. */
  z.object({ stage: z.literal('manage'), expiresAt: z.number(), user: principal, csrf: z.string() }),
]);

export type ConsentFlow = z.infer<typeof flowSchema>;
export type Connection = z.infer<typeof connectionSchema>;

/**
 * One signed-in browser's way through the consent pages, kept server-side (sealed, under an HMAC of the cookie
 * value) so the cookie holds only a random id. Each step takes the flow (single use) and stores the next stage, so
 * a replayed form or callback finds nothing. Only a sign-in creates one: anonymous visitors never write here.
 */
export interface ConsentFlows {
  /** The new flow's id (the cookie value); `undefined` when the store did not take it. */
  start(flow: ConsentFlow, now: number): Promise<string | undefined>;
  take(id: string): Promise<Lookup<ConsentFlow>>;
  get(id: string): Promise<Lookup<ConsentFlow>>;
  put(id: string, flow: ConsentFlow, now: number): Promise<boolean>;
}

const ID_BYTES = 32;

export function createConsentFlows(store: CacheStore, keySecret: Buffer): ConsentFlows {
  const records = createSealedRecords(store, keySecret, 'consent flow', flowSchema);
  const keyOf = (id: string) => consentKey(keySecret, 'flow', id);
  const put = (id: string, flow: ConsentFlow, now: number) => records.put(keyOf(id), flow, flow.expiresAt - now);
  return {
    async start(flow, now) {
      const id = randomBytes(ID_BYTES).toString('base64url');
      return (await put(id, flow, now)) ? id : undefined;
    },
    take: (id) => records.take(keyOf(id)),
    get: (id) => records.get(keyOf(id)),
    put,
  };
}
