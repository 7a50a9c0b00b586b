import { describe, expect, it } from 'vitest';
import { assembleGateway } from '../../src/gateway/assemble.js';
import { createCacheStore } from '../../src/gateway/cache-store.js';
import { parseConfig } from '../../src/config/load.js';
import { measureFailover, type Topology } from '../helpers/failover-load.js';

/**
 * A Redis failover under load on known sessions: Redis gone for seconds, then a replica promoted. The figures are
 * printed (bench/store-failover.ts compares checkouts); what is asserted does not depend on timing: a session this
 * replica has seen is never refused to its owner.
 */
describe('Redis failover with known sessions under load', () => {
  it.each<Topology>(['sentinel', 'cluster'])('%s: the primary killed and a replica promoted, no known session is refused', async (topology) => {
    const figures = await measureFailover(topology, { parseConfig, assembleGateway, createCacheStore });
    console.log(`failover ${JSON.stringify(figures)}`);
    expect(figures.requests).toBeGreaterThan(0);
    expect(figures.statuses).toEqual({ 200: figures.requests });
  }, 120_000);
});
