import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createValueSealer } from '../../../src/cache/sealed-value.js';

const SECRET = 'upstream-token-canary-51f0';

describe('createValueSealer', () => {
  const keySecret = randomBytes(32);
  const sealer = createValueSealer(keySecret, 'upstream token');

  it('round-trips, and the sealed text reveals nothing of the value', () => {
    const sealed = sealer.seal('k1', SECRET);
    expect(sealed).not.toContain(SECRET);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain(SECRET);
    expect(sealer.open('k1', sealed)).toBe(SECRET);
    expect(sealer.seal('k1', SECRET)).not.toBe(sealed);
  });

  it.each<[string, (sealed: string) => [key: string, value: string], ReturnType<typeof createValueSealer>?]>([
    ['copied under another cache key', (sealed) => ['k2', sealed]],
    ['one byte flipped', (sealed) => {
      const bytes = Buffer.from(sealed, 'base64url');
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
      return ['k1', bytes.toString('base64url')];
    }],
    ['truncated', (sealed) => ['k1', sealed.slice(0, 10)]],
    ['not base64', () => ['k1', '%%%']],
    ['another key secret', (sealed) => ['k1', sealed], createValueSealer(randomBytes(32), 'upstream token')],
    ['another purpose', (sealed) => ['k1', sealed], createValueSealer(keySecret, 'something else')],
  ])('does not open a value %s', (_title, tamper, opener = sealer) => {
    const [key, value] = tamper(sealer.seal('k1', SECRET));
    expect(opener.open(key, value)).toBeUndefined();
  });
});
