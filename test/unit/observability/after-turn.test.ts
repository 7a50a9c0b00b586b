import { describe, expect, it } from 'vitest';
import { afterQueued, afterTurn, runQueued } from '../../../src/observability/after-turn.js';

describe('afterTurn', () => {
  it('runs queued work in order after the current turn, not before', async () => {
    const ran: string[] = [];
    afterTurn(() => ran.push('first'));
    afterTurn(() => ran.push('second'));
    await Promise.resolve();
    process.nextTick(() => ran.push('tick'));
    // Microtasks and ticks of this turn come first: the queue waits for the turn's I/O callbacks to finish.
    await new Promise<void>((resolve) => process.nextTick(resolve));
    expect(ran).toEqual(['tick']);
    await afterQueued();
    expect(ran).toEqual(['tick', 'first', 'second']);
  });

  it('runQueued runs what is queued at once, and only once (shutdown)', async () => {
    const ran: string[] = [];
    afterTurn(() => ran.push('audit line'));
    runQueued();
    expect(ran).toEqual(['audit line']);
    await afterQueued();
    expect(ran).toEqual(['audit line']);
  });
});
