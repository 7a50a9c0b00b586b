import { describe, expect, it } from 'vitest';
import type { Cancel } from '../../../src/reload/runtime-switch.js';
import { shutdown, type ShutdownSteps } from '../../../src/reload/shutdown.js';

function steps() {
  const events: string[] = [];
  let releaseIdle: () => void = () => undefined;
  let deadline: (() => void) | undefined;
  const endedMethods: string[][] = [];
  const result: ShutdownSteps = {
    drain: () => events.push('drain'),
    refuseHalfSent: () => events.push('refuse half-sent'),
    answerUnanswered: () => {
      events.push('answer unanswered');
      return Promise.resolve();
    },
    streams: {
      endFrom: (matches) => {
        events.push('end streams');
        endedMethods.push(['GET', 'POST'].filter(matches));
      },
    },
    idle: () => new Promise<void>((resolve) => (releaseIdle = resolve)),
    closeListener: () => {
      events.push('close listener');
      return Promise.resolve();
    },
    dropConnections: () => {
      events.push('drop connections');
      releaseIdle();
    },
    graceMs: 20_000,
    schedule: (callback: () => void, delayMs: number): Cancel => {
      events.push(`deadline ${delayMs}`);
      deadline = callback;
      return () => {
        deadline = undefined;
      };
    },
  };
  return { steps: result, events, endedMethods, releaseIdle: () => releaseIdle(), fireDeadline: () => deadline?.() };
}

describe('graceful shutdown sequence', () => {
  it('I11 drains, ends GET streams only, waits for in-flight requests, then closes the listener', async () => {
    const { steps: s, events, endedMethods, releaseIdle } = steps();
    const done = shutdown(s);
    expect(events).toEqual(['drain', 'refuse half-sent', 'end streams', 'deadline 20000']);
    expect(endedMethods).toEqual([['GET']]);
    releaseIdle();
    expect(await done).toBe('clean');
    expect(events.at(-1)).toBe('close listener');
    expect(events).not.toContain('drop connections');
  });

  it('K10 at the grace deadline every stream is ended, unanswered requests get 503, then remaining connections are cut', async () => {
    const { steps: s, events, endedMethods, fireDeadline } = steps();
    const done = shutdown(s);
    fireDeadline();
    expect(await done).toBe('forced');
    expect(endedMethods).toEqual([['GET'], ['GET', 'POST']]);
    expect(events.slice(-4)).toEqual(['end streams', 'answer unanswered', 'drop connections', 'close listener']);
  });
});
