import { z } from 'zod';
import { createValueSealer } from '../cache/sealed-value.js';
import { connectionSchema } from './flows.js';
import { openRecord } from './records.js';

const signInSchema = z.object({
  expiresAt: z.number(),
  state: z.string(),
  nonce: z.string(),
  codeVerifier: z.string(),
  /** What the consent link asked for; absent when the user signs in to manage their grants. */
  connection: connectionSchema.optional(),
  /** The gateway's authorization server's interaction this sign-in answers (its login prompt). */
  interaction: z.string().optional(),
});

/**
 * A sign-in at the gateway's own authorization server (consent pages) or at the organisation's IdP (the gateway as
 * authorization server), from its redirect until its callback: one mechanism, one callback, one cookie.
 */
export type SignIn = z.infer<typeof signInSchema>;

/**
 * A sign-in in progress lives in the browser, in the flow cookie (HttpOnly, SameSite=Lax), sealed with AES-256-GCM
 * under a key derived from the cache key secret: anyone can start one, so it must cost the store nothing. The
 * browser can neither read nor change it; the authorization server's single-use code makes it single use.
 */
export interface SignInSealer {
  seal(signIn: SignIn): string;
  /** `undefined` for anything this key secret did not seal as a sign-in (a flow id, a tampered or foreign value). */
  open(sealed: string): SignIn | undefined;
}

/** The associated data of every sealed sign-in. */
const SIGN_IN = 'consent sign-in';

export function createSignInSealer(keySecret: Buffer): SignInSealer {
  const sealer = createValueSealer(keySecret, SIGN_IN);
  return {
    seal: (signIn) => sealer.seal(SIGN_IN, JSON.stringify(signIn)),
    open: (sealed) => openRecord(sealer, SIGN_IN, sealed, signInSchema),
  };
}
