import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Encrypts values the cache must hold but a Redis dump must not reveal (upstream access tokens). AES-256-GCM with a
 * key derived from the cache key secret per purpose; the cache key is the associated data, so a sealed value copied
 * under another key does not open.
 */
export interface ValueSealer {
  seal(cacheKey: string, plaintext: string): string;
  /** `undefined` when the value was not sealed by this key secret for this cache key (or is corrupt). */
  open(cacheKey: string, sealed: string): string | undefined;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function createValueSealer(keySecret: Buffer, purpose: string): ValueSealer {
  const key = Buffer.from(hkdfSync('sha256', keySecret, Buffer.alloc(0), `mcp-auth-gateway ${purpose}`, 32));
  return {
    seal(cacheKey, plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(cacheKey, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
    },
    open(cacheKey, sealed) {
      const bytes = Buffer.from(sealed, 'base64url');
      if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES)).setAAD(Buffer.from(cacheKey, 'utf8'));
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        return undefined;
      }
    },
  };
}
