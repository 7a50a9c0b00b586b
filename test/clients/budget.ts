/** Time for one client: its own timeout, cut to what is left of the run's when that is shorter. */
export interface ClientBudget {
  readonly ms: number;
  /** The run's deadline, not the client's own timeout, is what would stop it. */
  readonly cutByRun: boolean;
}

/**
 * The clients' timeouts add up to more than the run may take, so the run's deadline bounds each of them: a client
 * started near the end gets only what is left (0: it does not start).
 */
export function clientBudget(clientTimeoutMs: number, runDeadline: number, now: number): ClientBudget {
  const left = Math.max(0, runDeadline - now);
  return left < clientTimeoutMs ? { ms: left, cutByRun: true } : { ms: clientTimeoutMs, cutByRun: false };
}
