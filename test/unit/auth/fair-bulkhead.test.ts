import { describe, expect, it } from 'vitest';
import { clientBucket, createFairBulkhead, type BulkheadSlot } from '../../../src/auth/fair-bulkhead.js';

function fill(bulkhead: ReturnType<typeof createFairBulkhead>, client: string | undefined, count: number): (BulkheadSlot | string)[] {
  return Array.from({ length: count }, () => bulkhead.acquire(client));
}

describe('createFairBulkhead', () => {
  it('K11 one client gets a quarter of the slots; the others keep the rest', () => {
    const bulkhead = createFairBulkhead(64);
    const flood = fill(bulkhead, '192.0.2.66', 100);
    expect(flood.filter((slot) => typeof slot !== 'string')).toHaveLength(16);
    expect(flood.filter((slot) => slot === 'client_share_full')).toHaveLength(84);
    const others = ['192.0.2.1', '192.0.2.2', '192.0.2.3'].flatMap((client) => fill(bulkhead, client, 16));
    expect(others.every((slot) => typeof slot !== 'string')).toBe(true);
    expect(bulkhead.acquire('192.0.2.4')).toBe('bulkhead_full');
  });

  it('a released slot can be taken again, once per slot however often release is called', () => {
    const bulkhead = createFairBulkhead(4);
    const [first] = fill(bulkhead, 'a', 1);
    expect(bulkhead.acquire('a')).toBe('client_share_full');
    if (typeof first === 'string' || first === undefined) throw new Error('no slot');
    first.release();
    first.release();
    expect(typeof bulkhead.acquire('a')).toBe('object');
    expect(bulkhead.acquire('a')).toBe('client_share_full');
  });

  it('calls without a client address are bounded by the total only', () => {
    const bulkhead = createFairBulkhead(8);
    expect(fill(bulkhead, undefined, 8).every((slot) => typeof slot !== 'string')).toBe(true);
    expect(bulkhead.acquire(undefined)).toBe('bulkhead_full');
  });

  it('a tiny bulkhead still gives every client one slot', () => {
    const bulkhead = createFairBulkhead(2);
    expect(fill(bulkhead, 'a', 2).map((slot) => typeof slot)).toEqual(['object', 'string']);
  });
});

describe('clientBucket', () => {
  it.each([
    ['192.0.2.7', '192.0.2.7'],
    ['::ffff:192.0.2.7', '192.0.2.7'],
    ['::FFFF:192.0.2.7', '192.0.2.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s → %s', (address, bucket) => {
    expect(clientBucket(address)).toBe(bucket);
  });

  it('K11 every address of one IPv6 /64 shares one bucket', () => {
    expect(new Set(['2001:db8:1:2::1', '2001:db8:1:2:ffff::', '2001:db8:1:2:a:b:c:d'].map(clientBucket)).size).toBe(1);
  });
});
