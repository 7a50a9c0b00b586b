import { describe, expect, it } from 'vitest';
import { clientBucket, createFairBulkhead, type BulkheadRefusal, type BulkheadSlot, type FairBulkhead } from '../../../src/auth/fair-bulkhead.js';

/** A bulkhead whose wait timers the test fires by hand. */
function bulkheadOf(capacity: number) {
  const timers: (() => void)[] = [];
  const bulkhead = createFairBulkhead({
    capacity,
    maxWaitMs: 1_000,
    schedule: (callback) => {
      timers.push(callback);
      return () => timers.splice(timers.indexOf(callback), 1);
    },
  });
  return { bulkhead, expireWaits: () => [...timers].forEach((fire) => fire()) };
}

type Outcome = BulkheadSlot | BulkheadRefusal;

/** Asks `count` times for `client`; what was granted at once, and the calls still waiting. */
async function ask(bulkhead: FairBulkhead, client: string | undefined, count: number): Promise<{ granted: BulkheadSlot[]; pending: Promise<Outcome>[]; refused: BulkheadRefusal[] }> {
  const settled = new Map<Promise<Outcome>, Outcome>();
  const calls = Array.from({ length: count }, () => {
    const call = bulkhead.acquire(client);
    void call.then((outcome) => settled.set(call, outcome));
    return call;
  });
  await new Promise((resolve) => setImmediate(resolve));
  const outcomes = calls.map((call) => settled.get(call));
  return {
    granted: outcomes.filter((outcome): outcome is BulkheadSlot => typeof outcome === 'object'),
    refused: outcomes.filter((outcome): outcome is BulkheadRefusal => typeof outcome === 'string'),
    pending: calls.filter((call) => !settled.has(call)),
  };
}

describe('createFairBulkhead', () => {
  it('K11 one flooding client gets all but one share of the slots; the other clients always find their share free', async () => {
    const { bulkhead } = bulkheadOf(64);
    const flood = await ask(bulkhead, '192.0.2.66', 100);
    expect(flood.granted).toHaveLength(48);
    expect(flood.pending).toHaveLength(52);
    const valid = await ask(bulkhead, '192.0.2.1', 10);
    expect(valid.granted).toHaveLength(10);
  });

  it('K11 a freed slot goes to a waiting client below its share before the older waiters of the flooding client', async () => {
    const { bulkhead } = bulkheadOf(8);
    const flood = await ask(bulkhead, 'flood', 10);
    const busy = await ask(bulkhead, 'busy', 2);
    const late = await ask(bulkhead, 'late', 1);
    expect([flood.granted.length, flood.pending.length, busy.granted.length, late.pending.length]).toEqual([6, 4, 2, 1]);
    flood.granted[0]?.release();
    expect(typeof (await late.pending[0])).toBe('object');
  });

  it('beyond its share a client never takes the last share of free slots: they stay for clients still to come', async () => {
    const { bulkhead } = bulkheadOf(8);
    const flood = await ask(bulkhead, 'flood', 10);
    flood.granted[0]?.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await ask(bulkhead, 'newcomer', 2)).granted).toHaveLength(2);
  });

  it('one busy client alone (everything through one proxy address) waits for slots instead of failing', async () => {
    const { bulkhead } = bulkheadOf(8);
    const burst = await ask(bulkhead, 'proxy', 10);
    expect([burst.granted.length, burst.pending.length, burst.refused.length]).toEqual([6, 4, 0]);
    burst.granted.forEach((slot) => slot.release());
    expect((await Promise.all(burst.pending)).every((outcome) => typeof outcome === 'object')).toBe(true);
  });

  it('a call that waited maxWaitMs without a slot is refused (503 upstream of here)', async () => {
    const { bulkhead, expireWaits } = bulkheadOf(4);
    const held = await ask(bulkhead, 'a', 5);
    expect(held.pending).toHaveLength(2);
    expireWaits();
    expect(await Promise.all(held.pending)).toEqual(['client_share_full', 'client_share_full']);
  });

  it('the waiting room is bounded per client (one bulkhead) and in all (four)', async () => {
    const { bulkhead } = bulkheadOf(4);
    const one = await ask(bulkhead, 'a', 3 + 4 + 2);
    expect([one.granted.length, one.pending.length, one.refused]).toEqual([3, 4, ['client_share_full', 'client_share_full']]);
  });

  it('a released slot is given back once however often release is called', async () => {
    const { bulkhead } = bulkheadOf(1);
    const [slot] = (await ask(bulkhead, 'a', 1)).granted;
    slot?.release();
    slot?.release();
    expect((await ask(bulkhead, 'b', 2)).granted).toHaveLength(1);
  });

  it('calls without a client address are bounded by the total only', async () => {
    const { bulkhead } = bulkheadOf(8);
    const calls = await ask(bulkhead, undefined, 9);
    expect([calls.granted.length, calls.pending.length]).toEqual([8, 1]);
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
