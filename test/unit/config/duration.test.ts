import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../src/config/duration.js';

describe('parseDuration', () => {
  it.each<[number | string, number]>([
    [0, 0],
    [30, 30_000],
    [0.5, 500],
    ['0ms', 0],
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h', 3_600_000],
    ['24h', 86_400_000],
    ['30d', 2_592_000_000],
  ])('%j → %d ms', (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });

  it.each<number | string>([-1, Number.NaN, Number.POSITIVE_INFINITY, '', '5', '5 s', '1w', '1.5s', '-1s', '5S', 's'])(
    'rejects %j',
    (input) => {
      expect(parseDuration(input)).toBeUndefined();
    },
  );
});

describe('formatDuration', () => {
  it.each<[number, string]>([
    [0, '0ms'],
    [1, '1ms'],
    [1_500, '1500ms'],
    [30_000, '30s'],
    [300_000, '5m'],
    [5_400_000, '90m'],
    [7_200_000, '2h'],
  ])('%d ms → %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
