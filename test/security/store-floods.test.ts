import { describe, expect, it } from 'vitest';
import { assembleGateway } from '../../src/gateway/assemble.js';
import { createCacheStore } from '../../src/gateway/cache-store.js';
import { parseConfig } from '../../src/config/load.js';
import { createConsentLinks } from '../../src/grants/links.js';
import { createGrantStore } from '../../src/grants/grant-store.js';
import { measureFloods } from '../helpers/flood-load.js';

/**
 * The in-process store (no Redis) under the floods an outside attack sent (12,000 garbage tokens, 10,500 consent
 * links against one 10,000-entry LRU): what unauthenticated or one-caller traffic creates must not evict the
 * sessions and grants of everyone else. The bounds are scaled down (`cache.memory`) so each flood outgrows them,
 * as the attack outgrew the shared LRU, in seconds; bench/store-floods.ts replays the attack at full size.
 */
const LIVE = 200;
/** Room for the live sessions and valid answers, and for the grants (each with its revocation epoch). */
const LIVE_BOUND = 300;
const GRANT_BOUND = 500;
/** The smallest bound the schema allows. */
const OTHER_BOUND = 100;
/** Three times the largest bound: in one shared LRU of any of these sizes, nothing of the live state would stay. */
const FLOOD = 1_500;

describe('store floods (in-process store)', () => {
  it('garbage tokens, one caller\'s consent links and many visitors\' links, each flood three times the largest bound, leave every live session, grant and cached valid answer in place', async () => {
    const figures = await measureFloods(
      { parseConfig, assembleGateway, createCacheStore, createGrantStore, createConsentLinks },
      {
        liveSessions: LIVE,
        garbageTokens: FLOOD,
        oneCallerLinks: FLOOD,
        visitorLinks: FLOOD,
        memoryBounds: `{ sessions: ${LIVE_BOUND}, introspection: ${LIVE_BOUND}, grants: ${GRANT_BOUND}, introspection_negative: ${OTHER_BOUND}, consent_links: ${OTHER_BOUND}, consent_flows: ${OTHER_BOUND}, upstream_tokens: ${OTHER_BOUND}, rate_limits: ${OTHER_BOUND} }`,
      },
    );
    expect(figures).toEqual({
      liveSessions: LIVE,
      sessionsBefore: LIVE,
      garbageRefused: FLOOD,
      sessionsAfterGarbage: LIVE,
      // The valid callers' answers were not evicted either: none was introspected again.
      reintrospected: 0,
      grantsAfterGarbage: LIVE,
      // One live link per person and route, however often they ask.
      oneCallerLinkRecords: 1,
      grantsAfterVisitorLinks: LIVE,
    });
  }, 120_000);
});
