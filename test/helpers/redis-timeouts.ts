/**
 * Command timeout for Redis stores in tests that are not about timeouts. The production default (150 ms) is a
 * latency budget; on two busy CI cores an event-loop stall alone can exceed it and turn a working Redis into a miss.
 */
export const TEST_REDIS_COMMAND_TIMEOUT_MS = 5_000;
