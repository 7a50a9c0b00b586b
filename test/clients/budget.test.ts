import { describe, expect, it } from 'vitest';
import { clientBudget } from './budget.js';

describe('clientBudget: the run deadline bounds every client (issue 12 gap 4)', () => {
  it.each<[string, number, number, { ms: number; cutByRun: boolean }]>([
    ['plenty left: the client’s own timeout', 90_000, 0, { ms: 90_000, cutByRun: false }],
    ['exactly its timeout left', 90_000, 210_000, { ms: 90_000, cutByRun: false }],
    ['less left than its timeout: what is left, cut by the run', 90_000, 250_000, { ms: 50_000, cutByRun: true }],
    ['deadline reached: nothing, it does not start', 90_000, 300_000, { ms: 0, cutByRun: true }],
    ['deadline passed', 90_000, 400_000, { ms: 0, cutByRun: true }],
  ])('%s', (_title, timeoutMs, now, expected) => {
    expect(clientBudget(timeoutMs, 300_000, now)).toEqual(expected);
  });
});
