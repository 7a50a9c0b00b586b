/**
 * Polls `probe` until it returns a value, at most `attempts` times `intervalMs` apart (a bounded wait for a state
 * another process reaches, never a fixed sleep); `step` runs before each attempt. Throws naming `what`, plus
 * `context()` when given.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { readonly attempts?: number; readonly intervalMs?: number; readonly step?: () => Promise<void>; readonly context?: () => string } = {},
): Promise<T> {
  const { attempts = 300, intervalMs = 100, step, context } = options;
  for (let attempt = 0; attempt < attempts; attempt += 1) {
    await step?.();
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`never saw ${what}${context ? `\n${context()}` : ''}`);
}
