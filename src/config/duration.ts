/**
 * Durations in the YAML: a number of seconds (`30`, `0.5`) or a string with a unit (`500ms`, `30s`, `5m`, `1h`, `30d`).
 * The compiled config holds milliseconds.
 */

/** The unit of every duration in the compiled config. */
export type Milliseconds = number;

export const DURATION_PATTERN = /^(\d+)(ms|s|m|h|d)$/;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * Node clamps longer timers to 1 ms (TimeoutOverflowWarning), so no duration may exceed this unless it only ever
 * becomes a stored record's lifetime (MAX_RECORD_LIFETIME_MS).
 */
export const MAX_DURATION_MS = 2_147_483_647;

/** Longest lifetime of a stored record that no timer waits for (a refresh token): one year. */
export const MAX_RECORD_LIFETIME_MS = 365 * 86_400_000;

/** Milliseconds, or `undefined` when the input is not a duration. */
export function parseDuration(input: number | string): number | undefined {
  if (typeof input === 'number') {
    return Number.isFinite(input) && input >= 0 ? Math.round(input * 1_000) : undefined;
  }
  const match = DURATION_PATTERN.exec(input);
  if (!match) return undefined;
  const [, amount = '', unit = ''] = match;
  return Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
}

/** Shortest exact rendering, for messages: 300000 → `5m`. */
export function formatDuration(ms: number): string {
  for (const unit of ['h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
